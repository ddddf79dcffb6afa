// `vkattn plan bdpa <shape> [--caps FILE] [--json]`: which BDPA variant runs a
// call and why, for this device or any device in a caps file.
#include <fmt/format.h>

#include "commands.hpp"
#include "planner/bdpa_planner.hpp"
#include "vkattn/context.hpp"

namespace vkattn::cli {

void add_plan_bdpa(CLI::App& plan, GlobalOptions& g, int& status) {
  struct Opts {
    planner::BdpaShape shape{1, 1, 32, 8, 128, 4096, DType::f32, DType::f16};
    std::string q_dtype = "f32", basis_dtype = "f16";
    PlanFlags flags;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = plan.add_subcommand("bdpa", "Basis-decomposed paged attention");
  cmd->add_option("--batch", o->shape.batch, "B")->capture_default_str();
  cmd->add_option("--seq-len", o->shape.seq_len, "S (1 = decode)")->capture_default_str();
  cmd->add_option("--heads", o->shape.num_heads, "H")->capture_default_str();
  cmd->add_option("--kv-heads", o->shape.num_kv_heads, "Hkv")->capture_default_str();
  cmd->add_option("--head-dim", o->shape.head_dim, "D")->capture_default_str();
  cmd->add_option("--kv-len", o->shape.kv_len, "Keys (index entries) of the longest sequence")->capture_default_str();
  cmd->add_option("--q-dtype", o->q_dtype, "Q dtype")->check(CLI::IsMember({"f32", "f16", "bf16"}))->capture_default_str();
  cmd->add_option("--basis-dtype", o->basis_dtype, "Basis dtype")
      ->check(CLI::IsMember({"f32", "f16", "bf16"}))
      ->capture_default_str();
  add_plan_flags(cmd, o->flags);
  cmd->callback([o, &g, &status] {
    o->shape.q = dtype_from_string(o->q_dtype);
    o->shape.basis = dtype_from_string(o->basis_dtype);
    const DeviceCaps caps = plan_target_caps(o->flags, g);
    const auto p = planner::plan_bdpa(caps, o->shape, o->flags.overrides.plan_options());
    print_plan(caps, o->flags, planner::explain(p), planner::plan_to_json(p));
    status = 0;
  });
}

}  // namespace vkattn::cli

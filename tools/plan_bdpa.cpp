// `vkattn plan bdpa <shape> [--caps FILE] [--json]`: which BDPA variant runs a
// call and why, for this device or any device in a caps file.
#include <algorithm>

#include "commands.hpp"
#include "vkattn/bdpa.hpp"
#include "vkattn/context.hpp"
#include "vkattn/plan.hpp"

namespace vkattn::cli {

void add_plan_bdpa(CLI::App& plan, GlobalOptions& g, int& status) {
  struct Opts {
    BdpaParams params;
    uint32_t kv_len = 4096;
    std::string q = "f32", basis = "f16";
    PlanFlags flags;
  };
  auto o = std::make_shared<Opts>();
  o->params.num_heads = 32;
  o->params.num_kv_heads = 8;
  o->params.head_dim = 128;
  auto* cmd = plan.add_subcommand("bdpa", "Basis-decomposed paged attention");
  add_head_options(cmd, o->params);
  cmd->add_option("--kv-len", o->kv_len, "Keys (index entries) of the longest sequence")->capture_default_str();
  cmd->add_option("--q-dtype", o->q, "Q dtype")->check(CLI::IsMember({"f32", "f16", "bf16"}))->capture_default_str();
  cmd->add_option("--basis-dtype", o->basis, "Basis dtype")
      ->check(CLI::IsMember({"f32", "f16", "bf16"}))
      ->capture_default_str();
  add_plan_flags(cmd, o->flags);
  cmd->callback([o, &g, &status] {
    // An index holding exactly the keys, one basis and residual row per key (as
    // bdpa_build makes it); the queries are the last positions.
    BdpaParams p = o->params;
    p.kv_len = {o->kv_len};
    p.kv_capacity = p.num_basis = p.num_residual = std::max(1u, o->kv_len);
    p.start_pos = {o->kv_len >= p.seq_len ? o->kv_len - p.seq_len : 0};
    const DType q = dtype_from_string(o->q);
    const BdpaTensorTypes types{q, dtype_from_string(o->basis), q, false};
    const DeviceCaps caps = plan_target_caps(o->flags, g);
    print_plan(caps, o->flags, plan_bdpa(caps, p, types, o->flags.plan_options()));
    status = 0;
  });
}

}  // namespace vkattn::cli

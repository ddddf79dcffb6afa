// `vkattn plan text <shape> [--caps FILE] [--json]`: which variant runs a call
// and why, for this device or any device described by a caps file.
#include <fmt/format.h>

#include "commands.hpp"
#include "planner/text_planner.hpp"
#include "vkattn/context.hpp"
#include "vkattn/error.hpp"

namespace vkattn::cli {

void add_plan_command(CLI::App& app, GlobalOptions& g, int& status) {
  struct Opts {
    planner::TextShape shape;
    std::string q = "f32", kv = "f16";
    PlanFlags flags;
  };
  auto o = std::make_shared<Opts>();
  o->shape.num_heads = 32;
  o->shape.num_kv_heads = 8;
  o->shape.head_dim = 128;
  o->shape.kv_len = 4096;
  auto* plan = app.add_subcommand("plan", "Explain kernel selection");
  plan->require_subcommand(1);
  add_plan_vision(*plan, g, status);
  // No options: a Llama-3-8B decode step (the defaults --help shows).
  auto* text = plan->add_subcommand("text", "Text attention");
  text->add_option("--batch", o->shape.batch, "B")->capture_default_str();
  text->add_option("--seq-len", o->shape.seq_len, "S (1 = decode)")->capture_default_str();
  text->add_option("--heads", o->shape.num_heads, "H")->capture_default_str();
  text->add_option("--kv-heads", o->shape.num_kv_heads, "Hkv")->capture_default_str();
  text->add_option("--head-dim", o->shape.head_dim, "D")->capture_default_str();
  text->add_option("--kv-len", o->shape.kv_len, "keys per sequence")->capture_default_str();
  text->add_option("--q-dtype", o->q, "f32 | f16 | bf16")->capture_default_str();
  text->add_option("--kv-dtype", o->kv, "f32 | f16 | bf16 | i8 | i4")->capture_default_str();
  add_plan_flags(text, o->flags);
  text->callback([o, &g, &status] {
    o->shape.q = dtype_from_string(o->q);
    o->shape.kv = dtype_from_string(o->kv);
    const DeviceCaps caps = plan_target_caps(o->flags, g);
    auto p = planner::plan_text(caps, o->shape, o->flags.overrides.plan_options());
    print_plan(caps, o->flags, planner::explain(p), planner::plan_to_json(p));
    status = 0;
  });
}

}  // namespace vkattn::cli

// `vkattn plan text <shape> [--caps FILE] [--json]`: which variant runs a call
// and why, for this device or any device described by a caps file.
#include <fmt/format.h>

#include "commands.hpp"
#include "vkattn/plan.hpp"
#include "vkattn/text.hpp"
#include "vkattn/context.hpp"
#include "vkattn/error.hpp"

namespace vkattn::cli {

void add_plan_command(CLI::App& app, GlobalOptions& g, int& status) {
  struct Opts {
    TextAttentionParams params;
    uint32_t kv_len = 4096;
    std::string q = "f32", kv = "f16";
    PlanFlags flags;
  };
  auto o = std::make_shared<Opts>();
  o->params.num_heads = 32;
  o->params.num_kv_heads = 8;
  o->params.head_dim = 128;
  auto* plan = app.add_subcommand("plan", "Explain kernel selection");
  plan->require_subcommand(1);
  add_plan_vision(*plan, g, status);
  add_plan_audio(*plan, g, status);
  add_plan_bdpa(*plan, g, status);
  // No options: a Llama-3-8B decode step (the defaults --help shows).
  auto* text = plan->add_subcommand("text", "Text attention");
  add_head_options(text, o->params);
  text->add_option("--kv-len", o->kv_len, "keys per sequence")->capture_default_str();
  text->add_option("--q-dtype", o->q, "f32 | f16 | bf16")->capture_default_str();
  text->add_option("--kv-dtype", o->kv, "f32 | f16 | bf16 | i8 | i4")->capture_default_str();
  add_plan_flags(text, o->flags);
  text->callback([o, &g, &status] {
    // A contiguous cache holding exactly the keys; the queries are the last positions.
    TextAttentionParams p = o->params;
    p.kv_len = {o->kv_len};
    p.kv_capacity = o->kv_len;
    p.start_pos = {o->kv_len >= p.seq_len ? o->kv_len - p.seq_len : 0};
    const DType q = dtype_from_string(o->q);
    const TextTensorTypes types{q, dtype_from_string(o->kv), q, false};
    const DeviceCaps caps = plan_target_caps(o->flags, g);
    const Plan plan = plan_text(caps, p, types, o->flags.plan_options());
    print_plan(caps, o->flags, plan);
    status = 0;
  });
}

}  // namespace vkattn::cli

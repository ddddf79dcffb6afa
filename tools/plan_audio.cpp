// `vkattn plan audio <shape> [--caps FILE] [--json]`: which audio variant runs
// a call and why, for this device or any device in a caps file.
#include "commands.hpp"
#include "vkattn/audio.hpp"
#include "vkattn/context.hpp"
#include "vkattn/plan.hpp"

namespace vkattn::cli {

void add_plan_audio(CLI::App& plan, GlobalOptions& g, int& status) {
  struct Opts {
    AudioAttentionParams params;
    std::string dtype = "f32";
    PlanFlags flags;
  };
  auto o = std::make_shared<Opts>();
  o->params.frames = 750;  // 30 s of Gemma audio at 25 frames per second
  o->params.num_heads = 8;
  auto* cmd = plan.add_subcommand("audio", "Audio block-local attention");
  cmd->add_option("--frames", o->params.frames, "T")->capture_default_str();
  cmd->add_option("--heads", o->params.num_heads, "H")->capture_default_str();
  cmd->add_option("--head-dim", o->params.head_dim, "D")->capture_default_str();
  cmd->add_option("--dtype", o->dtype, "Q/K/V dtype")->check(CLI::IsMember({"f32", "f16"}))->capture_default_str();
  add_plan_flags(cmd, o->flags);
  cmd->callback([o, &g, &status] {
    const DType dtype = dtype_from_string(o->dtype);
    const DeviceCaps caps = plan_target_caps(o->flags, g);
    const Plan plan = plan_audio(caps, o->params, AudioTensorTypes{dtype, dtype}, o->flags.plan_options());
    print_plan(caps, o->flags, plan);
    status = 0;
  });
}

}  // namespace vkattn::cli

// `vkattn plan vision <shape> [--caps FILE] [--json]`: which vision variant
// runs a call and why, for this device or any device in a caps file.
#include <fmt/format.h>

#include "commands.hpp"
#include "vkattn/plan.hpp"
#include "vkattn/vision.hpp"
#include "vkattn/context.hpp"

namespace vkattn::cli {

void add_plan_vision(CLI::App& plan, GlobalOptions& g, int& status) {
  struct Opts {
    VisionAttentionParams params{2304, 12, 64, std::nullopt, VisionLayout::phd};
    std::string dtype = "f32", layout = "phd";
    PlanFlags flags;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = plan.add_subcommand("vision", "Vision attention");
  cmd->add_option("--patches", o->params.patches, "P")->capture_default_str();
  cmd->add_option("--heads", o->params.num_heads, "H")->capture_default_str();
  cmd->add_option("--head-dim", o->params.head_dim, "D")->capture_default_str();
  cmd->add_option("--dtype", o->dtype, "Q/K/V dtype")->check(CLI::IsMember({"f32", "f16"}))->capture_default_str();
  cmd->add_option("--layout", o->layout, "phd | hpd")->check(CLI::IsMember({"phd", "hpd"}))->capture_default_str();
  add_plan_flags(cmd, o->flags);
  cmd->callback([o, &g, &status] {
    o->params.layout = vision_layout_from_string(o->layout);
    const DType dtype = dtype_from_string(o->dtype);
    const DeviceCaps caps = plan_target_caps(o->flags, g);
    const Plan plan = plan_vision(caps, o->params, VisionTensorTypes{dtype, dtype}, o->flags.plan_options());
    print_plan(caps, o->flags, plan);
    status = 0;
  });
}

}  // namespace vkattn::cli

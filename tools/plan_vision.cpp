// `vkattn plan vision <shape> [--caps FILE] [--json]`: which vision variant
// runs a call and why, for this device or any device in a caps file.
#include <fmt/format.h>

#include "commands.hpp"
#include "planner/vision_planner.hpp"
#include "vkattn/context.hpp"

namespace vkattn::cli {

void add_plan_vision(CLI::App& plan, GlobalOptions& g, int& status) {
  struct Opts {
    planner::VisionShape shape{2304, 12, 64, DType::f32, VisionLayout::phd};
    std::string dtype = "f32", layout = "phd";
    PlanFlags flags;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = plan.add_subcommand("vision", "Vision attention");
  cmd->add_option("--patches", o->shape.patches, "P")->capture_default_str();
  cmd->add_option("--heads", o->shape.num_heads, "H")->capture_default_str();
  cmd->add_option("--head-dim", o->shape.head_dim, "D")->capture_default_str();
  cmd->add_option("--dtype", o->dtype, "Q/K/V dtype")->check(CLI::IsMember({"f32", "f16"}))->capture_default_str();
  cmd->add_option("--layout", o->layout, "phd | hpd")->check(CLI::IsMember({"phd", "hpd"}))->capture_default_str();
  add_plan_flags(cmd, o->flags);
  cmd->callback([o, &g, &status] {
    o->shape.dtype = dtype_from_string(o->dtype);
    o->shape.layout = vision_layout_from_string(o->layout);
    const DeviceCaps caps = plan_target_caps(o->flags, g);
    const auto p = planner::plan_vision(caps, o->shape, o->flags.overrides.plan_options());
    print_plan(caps, o->flags, planner::explain(p), planner::plan_to_json(p));
    status = 0;
  });
}

}  // namespace vkattn::cli

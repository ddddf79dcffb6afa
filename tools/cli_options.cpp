// Options several subcommands share.
#include <fmt/format.h>


#include "commands.hpp"
#include "vkattn/context.hpp"

namespace vkattn::cli {

PlanOptions OverrideFlags::plan_options() const {
  PlanOptions o;
  o.variant = variant;
  o.strict = strict;
  o.allow_reduced_precision = reduced_precision;
  return o;
}

PlanOptions PlanFlags::plan_options() const {
  PlanOptions o = overrides.plan_options();
  o.use_tuning_cache = !no_tuning_cache;
  return o;
}

void add_override_flags(CLI::App* cmd, OverrideFlags& flags, const std::string& variant_help,
                        const std::string& strict_help) {
  cmd->add_option("--variant", flags.variant, variant_help);
  cmd->add_flag("--strict", flags.strict, strict_help);
  cmd->add_flag("--reduced-precision", flags.reduced_precision,
                "Let f32 inputs be computed through f16 (faster tiles; the plan says when it applies)");
}

void add_plan_flags(CLI::App* cmd, PlanFlags& flags) {
  cmd->add_option("--caps", flags.caps_file, "Plan for the device in this caps file (from `vkattn devices --json`)");
  add_override_flags(cmd, flags.overrides, "Override the choice", "A rejected override is an error");
  cmd->add_flag("--json", flags.json, "Print JSON");
  cmd->add_flag("--explain", flags.explain,
                "Print every candidate and why, the geometry, and whether a tuning-cache entry decided (the default "
                "unless --json)");
  cmd->add_flag("--no-tuning-cache", flags.no_tuning_cache, "Plan by the rules alone, ignoring `vkattn tune` results");
}

DeviceCaps plan_target_caps(const PlanFlags& flags, const GlobalOptions& g) {
  if (!flags.caps_file.empty()) return load_caps_file(flags.caps_file);
  Context ctx(ContextOptions{g.device});
  return ctx.caps();
}

void print_plan(const DeviceCaps& caps, const PlanFlags& flags, const Plan& plan) {
  if (flags.json && !flags.explain) {
    fmt::print("{}\n", to_json(plan, -1));  // one line: JSON lines like every --json
    return;
  }
  fmt::print("device: {}\n{}", caps.name, explain(plan));
  fmt::print("legend: * chosen, + eligible, - rejected; the reason follows each variant\n");
}

}  // namespace vkattn::cli

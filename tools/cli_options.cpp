// Options several subcommands share.
#include "commands.hpp"
#include "vkattn/context.hpp"

namespace vkattn::cli {

PlanOptions OverrideFlags::plan_options() const {
  PlanOptions o;
  o.variant = variant;
  o.strict = strict;
  return o;
}

void add_override_flags(CLI::App* cmd, OverrideFlags& flags, const std::string& variant_help,
                        const std::string& strict_help) {
  cmd->add_option("--variant", flags.variant, variant_help);
  cmd->add_flag("--strict", flags.strict, strict_help);
}

DeviceCaps plan_target_caps(const std::string& caps_file, const GlobalOptions& g) {
  if (!caps_file.empty()) return load_caps_file(caps_file);
  Context ctx(ContextOptions{g.device});
  return ctx.caps();
}

}  // namespace vkattn::cli

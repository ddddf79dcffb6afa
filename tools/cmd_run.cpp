// `vkattn run <op> ...`: one op on .npy inputs, writing an .npy output.
#include "commands.hpp"

namespace vkattn::cli {

void add_run_command(CLI::App& app, GlobalOptions& g, int& status) {
  auto* run = app.add_subcommand("run", "Run one op on .npy inputs");
  run->require_subcommand(1);
  for (auto add : run_ops()) add(*run, g, status);
}

}  // namespace vkattn::cli

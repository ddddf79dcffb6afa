// Subcommands of the `vkattn` CLI, one file each.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

namespace vkattn::cli {

// Options every device-using command shares.
struct GlobalOptions {
  std::string device;  // --device / $VKATTN_DEVICE
};

// Each registers its subcommand; the callback it sets runs the command and
// stores its exit status in `status`.
void add_devices_command(CLI::App& app, GlobalOptions& g, int& status);
void add_demo_command(CLI::App& app, GlobalOptions& g, int& status);
void add_check_command(CLI::App& app, GlobalOptions& g, int& status);
void add_plan_command(CLI::App& app, GlobalOptions& g, int& status);

}  // namespace vkattn::cli

// Subcommands of the `vkattn` CLI, one file each.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

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
void add_run_command(CLI::App& app, GlobalOptions& g, int& status);
void add_bench_command(CLI::App& app, GlobalOptions& g, int& status);

// `vkattn run <op>` subcommands, one file each (tools/run_<op>.cpp); run_ops()
// in tools/run_ops.cpp lists them.
using AddRunOp = void (*)(CLI::App& run, GlobalOptions& g, int& status);
std::vector<AddRunOp> run_ops();

}  // namespace vkattn::cli

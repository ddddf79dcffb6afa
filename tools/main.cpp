// vkattn: devices, demo, check, bench, tune, plan, run.
//
// Exit status, the same for every command (README, "The CLI"):
//   0  success
//   1  a check failed: parity against the float64 oracle (check, demo, bench, run --check)
//   2  the command could not run: bad usage or input (CLI11's parse errors included),
//      or an error from the library (no device, I/O, ...); the message is on stderr
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <exception>

#include "check/stderr_log.hpp"
#include "commands.hpp"
#include "vkattn/error.hpp"
#include "vkattn/version.hpp"

namespace {

constexpr int kExitUsage = 2;

// Every subcommand, nested ones too, takes --device, so each one's --help shows it.
void add_device_option(CLI::App& cmd, std::string& device) {
  cmd.add_option("--device", device, "auto | cpu | gpu | <index> | <name substring> (default: $VKATTN_DEVICE or auto)");
  for (CLI::App* sub : cmd.get_subcommands({})) add_device_option(*sub, device);
}

}  // namespace

int main(int argc, char** argv) {
  vkattn::check::install_stderr_log();
  CLI::App app{"vkattn: portable GPU attention for LLM inference on Vulkan"};
  app.set_version_flag("--version", std::string(vkattn::version()), "Print the version and exit");
  app.footer("Exit status: 0 success, 1 a parity check failed, 2 bad usage or input, or an error (on stderr).");
  app.require_subcommand(1);
  vkattn::cli::GlobalOptions g;
  int status = 0;
  vkattn::cli::add_devices_command(app, g, status);
  vkattn::cli::add_demo_command(app, g, status);
  vkattn::cli::add_check_command(app, g, status);
  vkattn::cli::add_plan_command(app, g, status);
  vkattn::cli::add_run_command(app, g, status);
  vkattn::cli::add_bench_command(app, g, status);
  vkattn::cli::add_tune_command(app, g, status);
  add_device_option(app, g.device);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints help, the version, or the parse error
    return code == 0 ? 0 : kExitUsage;
  } catch (const std::exception& e) {
    fmt::print(stderr, "vkattn: error: {}\n", e.what());
    return kExitUsage;
  }
  return status;
}

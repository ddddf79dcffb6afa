// vkattn: devices, demo, check, plan.
#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "vkattn/error.hpp"
#include "vkattn/version.hpp"

int main(int argc, char** argv) {
  CLI::App app{"vkattn: portable GPU attention for LLM inference on Vulkan"};
  app.set_version_flag("--version", std::string(vkattn::version()), "Print the version and exit");
  app.require_subcommand(1);
  app.fallthrough();  // `vkattn <command> ... --device D` reaches the top-level option
  vkattn::cli::GlobalOptions g;
  app.add_option("--device", g.device, "auto | cpu | gpu | <index> | <name substring> (default: $VKATTN_DEVICE or auto)");
  int status = 0;
  vkattn::cli::add_devices_command(app, g, status);
  vkattn::cli::add_demo_command(app, g, status);
  vkattn::cli::add_check_command(app, g, status);
  vkattn::cli::add_plan_command(app, g, status);
  vkattn::cli::add_run_command(app, g, status);
  vkattn::cli::add_bench_command(app, g, status);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const vkattn::Error& e) {
    fmt::print(stderr, "vkattn: error: {}\n", e.what());
    return 2;
  }
  return status;
}

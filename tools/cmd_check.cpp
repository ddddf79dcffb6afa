// `vkattn check [--family text] [--json] [--full]`: the parity grid on the
// chosen device, one line per case, then "N passed, M failed".
#include <fmt/format.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "check/check_case.hpp"
#include "commands.hpp"
#include "vkattn/context.hpp"
#include "vkattn/error.hpp"

namespace vkattn::cli {

void add_check_command(CLI::App& app, GlobalOptions& g, int& status) {
  struct Opts {
    std::string family = "text";
    bool json = false;
    bool full = false;
    std::string filter;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("check", "Compare every kernel with the float64 oracle on this device");
  cmd->add_option("--family", o->family, "Op family: text, vision, audio, kvcache")->check(CLI::IsMember(check::check_families()));
  cmd->add_flag("--json", o->json, "One JSON object per case, then a summary object");
  cmd->add_flag("--full", o->full, "The larger GPU grid (model-sized shapes, 64k context)");
  cmd->add_option("--filter", o->filter, "Only cases whose name contains this text");
  cmd->callback([o, &g, &status] {
    Context ctx(ContextOptions{g.device});
    std::vector<check::CheckCase> grid;
    for (auto& c : check::check_cases(o->family, ctx.caps(), o->full ? check::GridSize::full : check::GridSize::ci))
      if (o->filter.empty() || c.name.find(o->filter) != std::string::npos) grid.push_back(std::move(c));
    // A filter that selects nothing would check nothing: bad input, not a pass.
    if (grid.empty())
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("--filter: expected a text that matches at least one {} case, got '{}'", o->family,
                              o->filter));
    int passed = 0, failed = 0;
    if (!o->json) fmt::print("device: {}\n", ctx.caps().name);
    for (size_t i = 0; i < grid.size(); ++i) {
      const auto& c = grid[i];
      fmt::print(stderr, "[{}/{}] case {}\n", i + 1, grid.size(), c.name);
      std::fflush(stderr);
      auto r = c.run(ctx, {});
      (r.passed ? passed : failed)++;
      if (o->json) {
        nlohmann::json j{{"case", r.name},         {"variant", r.variant}, {"passed", r.passed},
                         {"rel_err", r.cmp.rel_err}, {"tolerance", r.tol.abs_rel}, {"error", r.error}};
        fmt::print("{}\n", j.dump());
      } else {
        fmt::print("{} {:<44} {:<28} err {:.2e} (tol {:.1e}){}\n", r.passed ? "PASS" : "FAIL", r.name, r.variant,
                   r.cmp.rel_err, r.tol.abs_rel, r.error.empty() ? "" : "  error: " + r.error);
      }
      std::fflush(stdout);
    }
    // JSON output stays JSON lines: the summary is an object there.
    if (o->json) fmt::print("{}\n", nlohmann::json{{"passed", passed}, {"failed", failed}}.dump());
    else fmt::print("{} passed, {} failed\n", passed, failed);
    status = failed ? 1 : 0;
  });
}

}  // namespace vkattn::cli

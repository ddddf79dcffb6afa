// `vkattn tune [--suite NAME|FILE] [--runs N] [--json]`: times the eligible
// variants and tuning values of each text and vision case of a suite on this
// device and writes the fastest per family and shape bucket into the tuning cache, which the planner
// then consults ($VKATTN_TUNE_CACHE, else $XDG_CACHE_HOME/vkattn/tune.json).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "check/tune.hpp"
#include "commands.hpp"
#include "vkattn/context.hpp"
#include "vkattn/error.hpp"

namespace vkattn::cli {

void add_tune_command(CLI::App& app, GlobalOptions& g, int& status) {
  struct Opts {
    std::string suite = "decode";
    int runs = 10;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("tune", "Time variants and tuning values per shape bucket; write the tuning cache");
  cmd->add_option("--suite", o->suite, "A suite name (bench/suites/NAME.json; $VKATTN_BENCH_SUITES) or a suite file")
      ->capture_default_str();
  cmd->add_option("--runs", o->runs, "Timed replays per configuration (median)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "One JSON line per case");
  cmd->callback([o, &g, &status] {
    const check::BenchSuite suite = check::find_bench_suite(o->suite);
    Context ctx(ContextOptions{g.device});
    const check::TuneReport report = check::tune_into_cache(ctx, suite, check::TuneOptions{o->runs});
    const std::string& path = report.path;
    if (!o->json) fmt::print("device: {}\ntuning cache: {}\n", ctx.caps().name, path);
    for (const auto& t : report.outcomes) {
      if (o->json) {
        fmt::print("{}\n", nlohmann::json{{"case", t.case_name},
                                          {"family", std::string(to_string(t.family))},
                                          {"bucket", t.bucket},
                                          {"skipped", t.skipped},
                                          {"tried", t.tried},
                                          {"rules", t.rules.variant},
                                          {"rules_ms", t.rules.ms},
                                          {"variant", t.best.variant},
                                          {"splits", t.best.splits},
                                          {"tile_keys", t.best.tile_keys},
                                          {"rows", t.best.rows},
                                          {"ms", t.best.ms}}
                               .dump());
      } else if (!t.skipped.empty()) {
        fmt::print("{}: skipped ({})\n", t.case_name, t.skipped);
      } else {
        fmt::print("{}: {} splits {} keys {} rows {} {:.4f} ms (rules: {} {:.4f} ms; {} configurations)\n",
                   t.case_name, t.best.variant, t.best.splits, t.best.tile_keys, t.best.rows, t.best.ms,
                   t.rules.variant, t.rules.ms, t.tried);
      }
    }
    if (!o->json) fmt::print("{} entries in the cache\n", report.entries);
    status = 0;
  });
}

}  // namespace vkattn::cli

#include "check/tune.hpp"

#include <fmt/format.h>

#include <map>

#include "check/bench_run.hpp"
#include "ops/text/text_plan.hpp"
#include "planner/text_planner.hpp"
#include "vkattn/error.hpp"
#include "vkattn/plan.hpp"
#include "vkattn/text.hpp"

namespace vkattn::check {

namespace {

// The configurations worth timing for a case: every eligible variant as the
// rules would size it, and around the rules' winner its split count halved and
// doubled and each key step the kernels take.
std::vector<planner::TuneEntry> configurations(const Plan& rules) {
  std::vector<planner::TuneEntry> out;
  for (const auto& c : rules.candidates)
    if (c.eligible) out.push_back({c.variant, 0, 0, 0.0});
  const PlanGeometry& g = rules.geometry;
  if (rules.dispatches.size() == 2) {  // a split variant: attention, then the reduce
    if (g.splits > 2) out.push_back({rules.variant, g.splits / 2, 0, 0.0});
    out.push_back({rules.variant, g.splits * 2, 0, 0.0});
  }
  for (uint32_t keys : {16u, 32u, 64u})
    if (keys != g.tile_keys) out.push_back({rules.variant, 0, keys, 0.0});
  return out;
}

}  // namespace

std::vector<TuneOutcome> tune_suite(Context& ctx, const BenchSuite& suite, const TuneOptions& options,
                                    planner::TuneTable& table) {
  const DeviceCaps& caps = ctx.caps();
  std::vector<TuneOutcome> outcomes;
  std::map<std::string, planner::TuneEntry> best_of_bucket;
  for (const BenchSpec& spec : suite.cases) {
    if (spec.family != BenchFamily::text) continue;
    const TextCase& c = spec.text;
    TuneOutcome o;
    o.case_name = spec.name;
    const TextTensorTypes types{c.q, c.kv, c.out, c.gpu_kv_len};
    o.bucket = text::tune_bucket(planner::text_shape_of(c.params, c.q, c.kv, c.gpu_kv_len));
    if (std::string why = bench_skip_reason(caps, spec); !why.empty()) {
      o.skipped = why;
      outcomes.push_back(o);
      continue;
    }
    PlanOptions by_rules;
    by_rules.use_tuning_cache = false;
    const Plan rules = plan_text(caps, c.params, types, by_rules);
    o.rules = {rules.variant, 0, 0, 0.0};
    for (planner::TuneEntry e : configurations(rules)) {
      BenchRunOptions run;
      run.runs = options.runs;
      run.variant = e.variant;
      run.splits = e.splits;
      run.tile_keys = e.tile_keys;
      const BenchRecord r = run_bench_case(ctx, spec, run);
      // Only a configuration that ran, was timed and matched the oracle counts.
      if (r.status != BenchStatus::ok || !r.parity_passed || r.timing.runs == 0) continue;
      ++o.tried;
      e.ms = r.timing.median_ms;
      if (e.variant == rules.variant && !e.splits && !e.tile_keys) o.rules.ms = e.ms;
      if (o.best.variant.empty() || e.ms < o.best.ms) o.best = e;
    }
    if (o.best.variant.empty()) {
      o.skipped = caps.timestamps ? "no configuration ran and matched the oracle" : "the device has no timestamps";
    } else {
      auto [it, fresh] = best_of_bucket.try_emplace(o.bucket, o.best);
      if (!fresh && o.best.ms < it->second.ms) it->second = o.best;
    }
    outcomes.push_back(o);
  }
  for (const auto& [bucket, entry] : best_of_bucket) table.set(caps, PlanFamily::text, bucket, entry);
  return outcomes;
}

TuneReport tune_into_cache(Context& ctx, const BenchSuite& suite, const TuneOptions& options) {
  TuneReport report;
  report.path = planner::tune_cache_path();
  if (report.path.empty())
    throw Error(ErrorKind::invalid_argument,
                "tuning cache: expected $VKATTN_TUNE_CACHE, $XDG_CACHE_HOME or $HOME to be set, got none");
  planner::TuneTable table = planner::TuneTable::load(report.path);
  report.outcomes = tune_suite(ctx, suite, options, table);
  table.save(report.path);
  planner::reload_tune_table();
  report.entries = table.size();
  return report;
}

}  // namespace vkattn::check

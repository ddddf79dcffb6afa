#include "check/tune.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "check/bench_run.hpp"
#include "ops/text/text_plan.hpp"
#include "ops/vision/vision_plan.hpp"
#include "planner/text_planner.hpp"
#include "vkattn/error.hpp"
#include "vkattn/plan.hpp"
#include "vkattn/text.hpp"
#include "vkattn/vision.hpp"

namespace vkattn::check {

namespace {

// Every eligible variant as the rules would size it. Vision has no tuning
// values: its variants are the choices (tile width, queries per workgroup,
// subgroup reductions).
std::vector<planner::TuneEntry> variant_configurations(const Plan& rules) {
  std::vector<planner::TuneEntry> out;
  for (const auto& c : rules.candidates)
    if (c.eligible) out.push_back({c.variant, 0, 0, 0.0});
  return out;
}

// The configurations worth timing for a text case: every eligible variant,
// and around the rules' winner its split count halved and doubled, each key
// step the kernels take and its rows per workgroup halved and doubled.
std::vector<planner::TuneEntry> text_configurations(const Plan& rules) {
  std::vector<planner::TuneEntry> out = variant_configurations(rules);
  const PlanGeometry& g = rules.geometry;
  if (rules.dispatches.size() == 2) {  // a split variant: attention, then the reduce
    if (g.splits > 2) out.push_back({rules.variant, g.splits / 2, 0, 0.0});
    out.push_back({rules.variant, g.splits * 2, 0, 0.0});
  }
  for (uint32_t keys : {16u, 32u, 64u})
    if (keys != g.tile_keys) out.push_back({rules.variant, 0, keys, 0.0});
  const uint32_t rows = std::max(1u, g.query_rows) * std::max(1u, g.head_group);
  if (rows > 1) out.push_back({rules.variant, 0, 0, 0.0, rows / 2});
  out.push_back({rules.variant, 0, 0, 0.0, rows * 2});
  return out;
}

// What tuning one case needs: its family and bucket, and unless the device
// cannot run it (`skipped`), the rules' plan and the configurations to time.
struct Tunable {
  PlanFamily family;
  std::string bucket;
  std::string skipped;
  Plan rules;
  std::vector<planner::TuneEntry> configurations;
};

std::optional<Tunable> tunable(const DeviceCaps& caps, const BenchSpec& spec) {
  PlanOptions by_rules;
  by_rules.use_tuning_cache = false;
  Tunable t;
  t.skipped = bench_skip_reason(caps, spec);
  if (spec.family == BenchFamily::text) {
    const TextCase& c = spec.text;
    t.family = PlanFamily::text;
    t.bucket = text::tune_bucket(planner::text_shape_of(c.params, c.q, c.kv, c.gpu_kv_len));
    if (t.skipped.empty()) {
      t.rules = plan_text(caps, c.params, TextTensorTypes{c.q, c.kv, c.out, c.gpu_kv_len}, by_rules);
      t.configurations = text_configurations(t.rules);
    }
  } else if (spec.family == BenchFamily::vision) {
    const VisionCase& c = spec.vision;
    t.family = PlanFamily::vision;
    t.bucket = vision::tune_bucket(c.params, VisionTensorTypes{c.dtype, c.out});
    if (t.skipped.empty()) {
      t.rules = plan_vision(caps, c.params, VisionTensorTypes{c.dtype, c.out}, by_rules);
      t.configurations = variant_configurations(t.rules);
    }
  } else {
    return std::nullopt;  // audio has one variant per dtype; BDPA is planned by its own rules; probes are not attention
  }
  return t;
}

}  // namespace

std::vector<TuneOutcome> tune_suite(Context& ctx, const BenchSuite& suite, const TuneOptions& options,
                                    planner::TuneTable& table) {
  const DeviceCaps& caps = ctx.caps();
  std::vector<TuneOutcome> outcomes;
  std::map<std::pair<PlanFamily, std::string>, planner::TuneEntry> best_of_bucket;
  for (const BenchSpec& spec : suite.cases) {
    const std::optional<Tunable> t = tunable(caps, spec);
    if (!t) continue;
    TuneOutcome o;
    o.case_name = spec.name;
    o.family = t->family;
    o.bucket = t->bucket;
    if (!t->skipped.empty()) {
      o.skipped = t->skipped;
      outcomes.push_back(o);
      continue;
    }
    o.rules = {t->rules.variant, 0, 0, 0.0};
    for (planner::TuneEntry e : t->configurations) {
      BenchRunOptions run;
      run.runs = options.runs;
      run.variant = e.variant;
      run.splits = e.splits;
      run.tile_keys = e.tile_keys;
      run.rows = e.rows;
      const BenchRecord r = run_bench_case(ctx, spec, run);
      // Only a configuration that ran, was timed and matched the oracle counts.
      if (r.status != BenchStatus::ok || !r.parity_passed || r.timing.runs == 0) continue;
      ++o.tried;
      e.ms = r.timing.median_ms;
      if (e.variant == t->rules.variant && !e.splits && !e.tile_keys && !e.rows) o.rules.ms = e.ms;
      if (o.best.variant.empty() || e.ms < o.best.ms) o.best = e;
    }
    if (o.best.variant.empty()) {
      o.skipped = caps.timestamps ? "no configuration ran and matched the oracle" : "the device has no timestamps";
    } else {
      auto [it, fresh] = best_of_bucket.try_emplace({o.family, o.bucket}, o.best);
      if (!fresh && o.best.ms < it->second.ms) it->second = o.best;
    }
    outcomes.push_back(o);
  }
  for (const auto& [key, entry] : best_of_bucket) table.set(caps, key.first, key.second, entry);
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

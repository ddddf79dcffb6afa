// `vkattn tune`: times the eligible variants and tuning values of each text
// and vision case of a suite on the device, parity-checked against the float64
// oracle, and keeps the fastest per family and shape bucket in the tuning cache.
#pragma once

#include <string>
#include <vector>

#include "check/bench_suite.hpp"
#include "planner/tune_cache.hpp"
#include "vkattn/context.hpp"

namespace vkattn::check {

struct TuneOptions {
  int runs = 10;  // timed replays per configuration (median)
};

// One tuned case: what the rules pick, what timed fastest, and how many
// configurations ran (those that failed parity or could not run are left out).
struct TuneOutcome {
  std::string case_name;
  PlanFamily family = PlanFamily::text;
  std::string bucket;
  planner::TuneEntry rules;  // the rules' choice and its time
  planner::TuneEntry best;
  int tried = 0;
  std::string skipped;  // why the case was not tuned (empty: it was)
};

// Tunes every text and vision case of `suite` on ctx's device and writes the
// winners into `table` (one entry per family and bucket: the fastest over the
// suite's cases in it). Text: variants, splits, keys per step, rows per
// workgroup; vision: variants. Audio has one variant per dtype: not tuned.
std::vector<TuneOutcome> tune_suite(Context& ctx, const BenchSuite& suite, const TuneOptions& options,
                                    planner::TuneTable& table);

// tune_suite into the process's tuning cache file (planner::tune_cache_path()),
// merged with its entries, saved, and read again by the planner.
struct TuneReport {
  std::string path;
  std::vector<TuneOutcome> outcomes;
  size_t entries = 0;  // in the file after the merge
};
TuneReport tune_into_cache(Context& ctx, const BenchSuite& suite, const TuneOptions& options);

}  // namespace vkattn::check

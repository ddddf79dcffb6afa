// Runs one benchmark case: checks that it fits the device (or says why it is
// skipped), times it (check/timing.hpp), and checks parity with the float64
// oracle outside the timed loop: on every row for small cases, on a sample of
// (sequence, KV head, query rows) blocks for large ones.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "check/bench_probes.hpp"
#include "check/bound_pipelines.hpp"
#include "check/bench_suite.hpp"
#include "check/timing.hpp"
#include "reference/tolerance.hpp"
#include "vkattn/context.hpp"

namespace vkattn::check {

struct BenchRunOptions {
  int runs = 30;                // timed replays per case (median, min, max)
  double max_run_ms = 1000.0;   // a case whose first run takes longer is not timed
  bool dry_run = false;         // only decide what would run or be skipped
  // Planner overrides (strict) for text cases, and `variant` for vision cases
  // when it names a vision variant; empty / 0: the planner's choice.
  std::string variant;
  uint32_t splits = 0, tile_keys = 0, rows = 0;
  // Report the pipelines each timed call binds, with the driver's statistics
  // when the context captures them (ContextOptions::pipeline_statistics).
  bool pipeline_stats = false;
};


enum class BenchStatus { ok, skipped, failed, error };
std::string_view to_string(BenchStatus s);

struct BenchRecord {
  BenchStatus status = BenchStatus::ok;
  std::string reason;        // skipped: why; failed: the parity or probe check; error: the message
  std::string variant;
  ReplayTiming timing;       // runs == 0: not timed
  double bytes = 0.0;        // a perfect kernel's bytes (probes: bytes read)
  double flops = 0.0;
  uint32_t input_sets = 0;   // input sets the timed copies rotated among (check/timing.hpp); 0: none
  // Parity with the oracle: rows checked of all output rows (0: not checked).
  uint64_t checked_rows = 0, total_rows = 0;
  double rel_err = 0.0;
  double tolerance = 0.0;
  bool parity_passed = true;
  std::string detail;        // probes: what was checked
  std::vector<BoundPipeline> pipelines;  // with BenchRunOptions::pipeline_stats
};

// Decides whether `spec` fits the device; empty when it does, else the reason.
std::string bench_skip_reason(const DeviceCaps& caps, const BenchSpec& spec);
// What a dry run reports: ok, or skipped with the reason (and the case's work).
BenchRecord dry_run_case(const DeviceCaps& caps, const BenchSpec& spec);
BenchRecord run_bench_case(Context& ctx, const BenchSpec& spec, const BenchRunOptions& options);

// Seeds of the bench pattern (check/bench_probes.hpp) per input tensor.
constexpr uint32_t kBenchSeedQ = 1, kBenchSeedK = 2, kBenchSeedV = 3;
constexpr uint32_t kBenchSeedHotK = 4, kBenchSeedHotV = 5;  // a tiered cache's hot ring
// Fills one call's Q, K and V with the bench pattern under their seeds.
inline void record_fill_inputs(Recorder& rec, const Tensor& q, const Tensor& k, const Tensor& v) {
  record_fill(rec, q, kBenchSeedQ);
  record_fill(rec, k, kBenchSeedK);
  record_fill(rec, v, kBenchSeedV);
}

// The text runner (check/bench_text.cpp): inputs filled on the GPU with the
// bench pattern, so model-sized caches need no host data.
BenchRecord run_text_bench(Context& ctx, const TextCase& c, const BenchRunOptions& options);
std::string text_skip_reason(const DeviceCaps& caps, const TextCase& c);
// Parity of `got` (the whole output of `c` on pattern-filled inputs, with
// `table` its page table) on every row, or on sampled blocks past the oracle
// budget; sets r's parity fields, and a failed status past `tol`.
// Quantized K/V as the kernel reads them (codes and f16 scales in storage
// order), for parity over the dequantized values.
struct QuantizedKv {
  std::vector<uint32_t> k_words, v_words;
  std::vector<uint16_t> k_scales, v_scales;
};
void check_text_parity(const TextCase& c, const std::vector<uint32_t>& table, const std::vector<float>& got,
                       reference::Tolerance tol, BenchRecord& r, const QuantizedKv* quantized = nullptr);
// Runs copy 0 of a call once (its output is what parity checks), then times
// it back to back (check/timing.hpp) unless the device has no timestamps or
// that run exceeded --max-run-ms (r says why). `record(rec, i)` records copy i.
// With options.pipeline_stats, r.pipelines are the pipelines copy 0 bound
// (every copy binds the same: one plan).
void time_bench_call(Context& ctx, const std::function<void(Recorder&, uint32_t)>& record,
                     const BenchRunOptions& options, BenchRecord& r);

// The vision runner (check/bench_vision.cpp): PHD cases on pattern-filled
// inputs, checked as the text case they equal (one sequence, every query sees
// every key) on a sample; HPD cases through run_vision_case.
BenchRecord run_vision_bench(Context& ctx, const VisionCase& c, const BenchRunOptions& options);

}  // namespace vkattn::check

#include "check/bench_run.hpp"

#include <fmt/format.h>

#include "check/text_work.hpp"
#include "vkattn/error.hpp"

namespace vkattn::check {

namespace {

// Audio, BDPA and head-major vision cases (host inputs, whole-output oracle) whose
// oracle costs more than this (multiply-adds, a few seconds on one core) are
// timed without it.
constexpr double kOracleFlops = 1e10;

BenchRecord from_check(const CheckResult& c, bool oracle, const BenchRunOptions& options, uint64_t rows) {
  BenchRecord r;
  if (c.gpu_ms > 0) r.timing.runs = options.runs;
  if (options.pipeline_stats) r.pipelines = c.pipelines;
  r.variant = c.variant;
  r.bytes = c.bytes_moved;
  r.flops = c.flops;
  r.input_sets = c.input_sets;
  r.timing.median_ms = c.gpu_ms;
  r.timing.min_ms = c.gpu_min_ms;
  r.timing.max_ms = c.gpu_max_ms;
  r.tolerance = c.tol.abs_rel;
  if (!c.error.empty()) {
    r.status = BenchStatus::error;
    r.reason = c.error;
    return r;
  }
  if (oracle) {
    r.checked_rows = r.total_rows = rows;
    r.rel_err = c.cmp.rel_err;
    r.parity_passed = c.passed;
    if (!c.passed) {
      r.status = BenchStatus::failed;
      r.reason = fmt::format("parity: max relative error {:.2e} above the tolerance {:.1e}", c.cmp.rel_err,
                             c.tol.abs_rel);
    }
  }
  return r;
}

BenchRecord run_probe(Context& ctx, const ProbeSpec& p, const BenchRunOptions& options) {
  ProbeResult pr;
  switch (p.kind) {
    case ProbeKind::read_bandwidth: pr = read_probe(ctx, p.bytes, options.runs); break;
    case ProbeKind::coopmat_fp16: {
      const uint32_t units = ctx.caps().compute_units ? ctx.caps().compute_units : 64;
      pr = coopmat_probe(ctx, p.workgroups ? p.workgroups : units * 64, p.iterations, options.runs);
      break;
    }
    case ProbeKind::dispatch_floor: pr = dispatch_floor_probe(ctx, options.runs); break;
  }
  BenchRecord r;
  if (!pr.supported) {
    r.status = BenchStatus::skipped;
    r.reason = pr.reason;
    return r;
  }
  r.variant = pr.name;
  r.timing.median_ms = pr.ms;
  r.timing.min_ms = pr.min_ms;
  r.timing.max_ms = pr.max_ms;
  r.timing.runs = options.runs;
  r.bytes = pr.bytes;
  r.flops = pr.flops;
  r.detail = pr.detail;
  r.parity_passed = pr.checked;
  if (!pr.checked) {
    r.status = BenchStatus::failed;
    r.reason = "probe result: " + pr.detail;
  }
  return r;
}

}  // namespace

std::string_view to_string(BenchStatus s) {
  switch (s) {
    case BenchStatus::ok: return "ok";
    case BenchStatus::skipped: return "skipped";
    case BenchStatus::failed: return "failed";
    case BenchStatus::error: return "error";
  }
  return "?";
}

std::string bench_skip_reason(const DeviceCaps& caps, const BenchSpec& spec) {
  return spec.family == BenchFamily::text ? text_skip_reason(caps, spec.text) : "";
}

BenchRecord dry_run_case(const DeviceCaps& caps, const BenchSpec& spec) {
  BenchRecord r;
  if (spec.family == BenchFamily::text) {
    const TextWork work = text_work(spec.text.params, spec.text.q, spec.text.kv, spec.text.out);
    r.bytes = work.bytes;
    r.flops = work.flops;
  }
  r.reason = bench_skip_reason(caps, spec);
  r.status = r.reason.empty() ? BenchStatus::ok : BenchStatus::skipped;
  return r;
}

BenchRecord run_bench_case(Context& ctx, const BenchSpec& spec, const BenchRunOptions& options) {
  if (options.dry_run) return dry_run_case(ctx.caps(), spec);
  try {
    switch (spec.family) {
      case BenchFamily::text: return run_text_bench(ctx, spec.text, options);
      case BenchFamily::probe: return run_probe(ctx, spec.probe, options);
      case BenchFamily::vision: {
        const auto& p = spec.vision.params;
        if (p.layout == VisionLayout::phd) return run_vision_bench(ctx, spec.vision, options);
        const bool oracle = 2.0 * p.patches * p.patches * p.num_heads * p.head_dim <= kOracleFlops;
        return from_check(run_vision_case(ctx, spec.vision, RunOptions{options.runs, !oracle}), oracle, options,
                          uint64_t(p.patches) * p.num_heads);
      }
      case BenchFamily::audio: {
        const auto& p = spec.audio.params;
        const double keys = p.chunk + p.max_past + p.max_future;
        const bool oracle = 2.0 * p.frames * keys * p.num_heads * p.head_dim <= kOracleFlops;
        return from_check(run_audio_case(ctx, spec.audio, RunOptions{options.runs, !oracle}), oracle, options,
                          uint64_t(p.frames) * p.num_heads);
      }
      case BenchFamily::bdpa: {
        // Built on the GPU from a contiguous cache; only the attention is timed.
        const auto& p = spec.bdpa.params;
        const double keys = double(p.batch) * p.kv_capacity;
        const bool oracle = 2.0 * keys * p.seq_len * p.num_heads * p.head_dim <= kOracleFlops;
        return from_check(run_bdpa_case(ctx, spec.bdpa, RunOptions{options.runs, !oracle}), oracle, options,
                          uint64_t(p.batch) * p.seq_len * p.num_heads);
      }
    }
  } catch (const Error& e) {
    BenchRecord r;
    // What this device cannot run is a skip with the library's reason; the rest is an error.
    const bool skip = e.kind() == ErrorKind::unsupported || e.kind() == ErrorKind::out_of_memory;
    r.status = skip ? BenchStatus::skipped : BenchStatus::error;
    r.reason = e.what();
    return r;
  } catch (const std::exception& e) {
    BenchRecord r;
    r.status = BenchStatus::error;
    r.reason = e.what();
    return r;
  }
  return {};
}

}  // namespace vkattn::check

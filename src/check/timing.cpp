#include "check/timing.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <vector>

namespace vkattn::check {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

// When the last replay of any case finished: a gap longer than kIdleGapMs
// means the GPU may have clocked down.
Clock::time_point last_replay_end{};

// Runs `replay` (one submit, returning one GPU time) in windows until the
// clocks are stable (see time_replays); returns the wall time it took.
double warm_up(const std::function<double()>& replay) {
  const auto start = Clock::now();
  const bool idle = last_replay_end == Clock::time_point{} ||
                    std::chrono::duration<double, std::milli>(start - last_replay_end).count() > kIdleGapMs;
  const double min_wall = idle ? kWarmupMs : kWarmupShortMs;
  double previous = -1.0;
  for (;;) {
    std::vector<double> window;
    const auto window_start = Clock::now();
    while (window.size() < 3 || ms_since(window_start) < kWindowMs) window.push_back(replay());
    const double m = median(window);
    const double wall = ms_since(start);
    const bool stable = previous > 0 && std::abs(m - previous) <= kStableFraction * previous;
    if ((stable && wall >= min_wall) || wall >= kWarmupMaxMs) break;
    previous = m;
  }
  return ms_since(start);
}

ReplayTiming summarise(std::vector<double> ms, double warmup_ms) {
  last_replay_end = Clock::now();
  ReplayTiming t;
  t.warmup_ms = warmup_ms;
  if (ms.empty()) return t;
  t.runs = int(ms.size());
  t.min_ms = *std::min_element(ms.begin(), ms.end());
  t.max_ms = *std::max_element(ms.begin(), ms.end());
  t.median_ms = median(std::move(ms));
  return t;
}

}  // namespace

ReplayTiming time_replays(Recorder& rec, uint32_t t0, uint32_t t1, int runs) {
  auto replay = [&] {
    rec.run();
    return rec.elapsed_ms(t0, t1);
  };
  const double warmup_ms = warm_up(replay);
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) ms.push_back(replay());
  return summarise(std::move(ms), warmup_ms);
}

ReplayTiming time_back_to_back(Context& ctx, const std::function<void(Recorder&, uint32_t)>& record, int runs) {
  // One copy first, to learn how many copies fill a submit.
  uint32_t copies = 1;
  {
    Recorder probe(ctx);
    const uint32_t t0 = probe.timestamp();
    record(probe, 0);
    const uint32_t t1 = probe.timestamp();
    const ReplayTiming one = time_replays(probe, t0, t1, 3);
    copies = one.median_ms > 0 ? uint32_t(std::clamp(std::ceil(kBackToBackMs / one.median_ms), 1.0,
                                                     double(kMaxCopiesPerSubmit)))
                               : kMaxCopiesPerSubmit;
  }
  // One timestamp pair around all copies, each submit one sample of the
  // mean: a timestamp between copies waits for the copy before it, and on an
  // H100 that cost every call 1.1-1.4 us (dispatch floor 3.55 -> 2.20 us);
  // the peer's CUDA-graph replays are timed the same way, N calls per event pair.
  Recorder rec(ctx);
  const uint32_t t0 = rec.timestamp();
  for (uint32_t i = 0; i < copies; ++i) {
    rec.barrier();  // copies run one after another, as a runtime's layers do
    record(rec, i);
  }
  const uint32_t t1 = rec.timestamp();
  auto per_call = [&] {
    rec.run();
    return rec.elapsed_ms(t0, t1) / copies;
  };
  const double warmup_ms = warm_up(per_call);
  std::vector<double> ms;
  for (int i = 0; i < std::max(runs, 1); ++i) ms.push_back(per_call());
  return summarise(std::move(ms), warmup_ms);
}

uint32_t rotation_sets(uint64_t bytes_per_set) {
  return uint32_t(std::clamp<uint64_t>(kRotationBytes / std::max<uint64_t>(bytes_per_set, 1), 1, kMaxRotationSets));
}

double median_replay_ms(Recorder& rec, uint32_t t0, uint32_t t1, int runs) {
  return time_replays(rec, t0, t1, runs).median_ms;
}

}  // namespace vkattn::check

#include "check/timing.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
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

}  // namespace

ReplayTiming time_replays(Recorder& rec, uint32_t t0, uint32_t t1, int runs) {
  ReplayTiming t;
  const auto start = Clock::now();
  const bool idle = last_replay_end == Clock::time_point{} ||
                    std::chrono::duration<double, std::milli>(start - last_replay_end).count() > kIdleGapMs;
  const double min_wall = idle ? kWarmupMs : kWarmupShortMs;
  double previous = -1.0;
  for (;;) {
    std::vector<double> window;
    const auto window_start = Clock::now();
    while (window.size() < 3 || ms_since(window_start) < kWindowMs) {
      rec.run();
      window.push_back(rec.elapsed_ms(t0, t1));
    }
    const double m = median(window);
    const double wall = ms_since(start);
    const bool stable = previous > 0 && std::abs(m - previous) <= kStableFraction * previous;
    if ((stable && wall >= min_wall) || wall >= kWarmupMaxMs) break;
    previous = m;
  }
  t.warmup_ms = ms_since(start);
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    rec.run();
    ms.push_back(rec.elapsed_ms(t0, t1));
  }
  last_replay_end = Clock::now();
  if (ms.empty()) return t;
  t.runs = runs;
  t.min_ms = *std::min_element(ms.begin(), ms.end());
  t.max_ms = *std::max_element(ms.begin(), ms.end());
  t.median_ms = median(std::move(ms));
  return t;
}

double median_replay_ms(Recorder& rec, uint32_t t0, uint32_t t1, int runs) {
  return time_replays(rec, t0, t1, runs).median_ms;
}

}  // namespace vkattn::check

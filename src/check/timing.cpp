#include "check/timing.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

namespace vkattn::check {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Replays `rec` for kWarmupMs of wall time (and at least twice).
void warm_up(Recorder& rec) {
  const auto start = Clock::now();
  for (int i = 0; i < 2 || ms_since(start) < kWarmupMs; ++i) rec.run();
}

GpuTiming summarise(std::vector<double> ms) {
  GpuTiming t;
  if (ms.empty()) return t;
  std::sort(ms.begin(), ms.end());
  t.samples = int(ms.size());
  t.min_ms = ms.front();
  t.max_ms = ms.back();
  t.median_ms = ms[ms.size() / 2];
  return t;
}

}  // namespace

GpuTiming time_back_to_back(Context& ctx, const std::function<void(Recorder&, uint32_t)>& record, int runs) {
  // One copy first, to learn how many copies fill a submit.
  uint32_t copies = 1;
  {
    Recorder probe(ctx);
    const uint32_t t0 = probe.timestamp();
    record(probe, 0);
    const uint32_t t1 = probe.timestamp();
    warm_up(probe);
    const double one = probe.elapsed_ms(t0, t1);
    copies = one > 0 ? uint32_t(std::clamp(std::ceil(kBackToBackMs / one), 1.0, double(kMaxCopiesPerSubmit)))
                     : kMaxCopiesPerSubmit;
  }
  Recorder rec(ctx);
  std::vector<uint32_t> stamps{rec.timestamp()};
  for (uint32_t i = 0; i < copies; ++i) {
    record(rec, i);
    stamps.push_back(rec.timestamp());
  }
  warm_up(rec);
  std::vector<double> ms;
  while (ms.size() < size_t(std::max(runs, 1))) {
    rec.run();
    for (size_t i = 1; i < stamps.size(); ++i) ms.push_back(rec.elapsed_ms(stamps[i - 1], stamps[i]));
  }
  return summarise(std::move(ms));
}

uint32_t rotation_sets(uint64_t bytes_per_set) {
  return uint32_t(std::clamp<uint64_t>(kRotationBytes / std::max<uint64_t>(bytes_per_set, 1), 1, kMaxRotationSets));
}

double median_replay_ms(Recorder& rec, uint32_t t0, uint32_t t1, int runs) {
  warm_up(rec);
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    rec.run();
    ms.push_back(rec.elapsed_ms(t0, t1));
  }
  return summarise(std::move(ms)).median_ms;
}

}  // namespace vkattn::check

// GPU timing shared by every case family.
#pragma once

#include <cstdint>
#include <functional>

#include "vkattn/context.hpp"
#include "vkattn/recorder.hpp"

namespace vkattn::check {

struct GpuTiming {
  double median_ms = 0.0, min_ms = 0.0, max_ms = 0.0;
  int samples = 0;
};

// Times one call as a runtime runs it: many copies recorded back to back in
// one command buffer (barriers between them, a timestamp between each), so the
// GPU stays busy and its core and memory clocks stay up. A replay loop that
// submits one short call at a time leaves the GPU idle between submits, and
// on the H200 that alone made memory-bound calls 2-8x slower and erratic.
// `record(rec, i)` records copy i; callers rotate among several input sets so
// the repeats are not served from the cache. Replays for at least kWarmupMs
// first, then returns the median, min and max over at least `runs` copies.
GpuTiming time_back_to_back(Context& ctx, const std::function<void(Recorder&, uint32_t)>& record, int runs);

// Replays `rec` (already recorded, with timestamps t0 and t1 around the work)
// `runs` times after the same warm-up and returns the median GPU milliseconds.
double median_replay_ms(Recorder& rec, uint32_t t0, uint32_t t1, int runs);

constexpr double kWarmupMs = 200.0;
// GPU work per submit that time_back_to_back aims for, and its copy limit.
constexpr double kBackToBackMs = 2.0;
constexpr uint32_t kMaxCopiesPerSubmit = 200;  // a recording holds 256 timestamps
// Input sets a timed case rotates among: enough that they do not fit in the
// last-level cache together (50 MiB on the H200), at most kMaxRotationSets.
constexpr uint64_t kRotationBytes = 256ull << 20;
constexpr uint32_t kMaxRotationSets = 8;
uint32_t rotation_sets(uint64_t bytes_per_set);

}  // namespace vkattn::check

// GPU timing shared by every case family.
#pragma once

#include <cstdint>
#include <functional>

#include "vkattn/context.hpp"
#include "vkattn/recorder.hpp"

namespace vkattn::check {

struct ReplayTiming {
  double median_ms = 0.0, min_ms = 0.0, max_ms = 0.0;
  int runs = 0;            // timed samples (back to back: submits, each the mean of its copies)
  double warmup_ms = 0.0;  // wall time spent warming up
};

// Times one call as a runtime runs it: many copies recorded back to back in
// one command buffer (barriers between them, one timestamp before the first
// and one after the last), so the GPU stays busy and its core and memory
// clocks stay up. A loop that submits one short call at a time leaves the GPU
// idle between submits, and on the H200 that alone made memory-bound decode
// 2-8x slower and erratic (B32 L2048 f16: 0.14, 0.50 and 1.1 ms in one run).
// `record(rec, i)` records copy i; callers rotate among rotation_sets() input
// sets so the repeats are not served from the cache. Warms up as time_replays
// does, then returns the median, min and max over `runs` submits of one
// call's mean time in each.
ReplayTiming time_back_to_back(Context& ctx, const std::function<void(Recorder&, uint32_t)>& record, int runs);

// Replays `rec` (already recorded, with timestamps t0 and t1 around the work)
// until the GPU's clocks are stable, then `runs` times, and returns the
// median, min and max GPU milliseconds of those runs. For calls long enough
// that the gaps between submits do not matter (probes, vision, audio).
//
// Warm-up: a GPU left idle (while the host built the previous case or ran its
// oracle) clocks down, and a few short replays do not bring it back up. So
// replays run in windows of at least kWindowMs until the median of a window is
// within kStableFraction of the previous one, for at least kWarmupMs of wall
// time after an idle gap of kIdleGapMs (kWarmupShortMs otherwise) and at most
// kWarmupMaxMs.
ReplayTiming time_replays(Recorder& rec, uint32_t t0, uint32_t t1, int runs);
double median_replay_ms(Recorder& rec, uint32_t t0, uint32_t t1, int runs);

// Input sets a timed call rotates among: enough that together they do not fit
// in the last-level cache (50 MiB on the H200), at most kMaxRotationSets.
uint32_t rotation_sets(uint64_t bytes_per_set);

constexpr double kWarmupMs = 200.0;
constexpr double kWarmupShortMs = 20.0;
constexpr double kWarmupMaxMs = 2000.0;
constexpr double kIdleGapMs = 50.0;
constexpr double kWindowMs = 5.0;
constexpr double kStableFraction = 0.02;
// GPU work per submit that time_back_to_back aims for, and its copy limit.
constexpr double kBackToBackMs = 2.0;
constexpr uint32_t kMaxCopiesPerSubmit = 200;
constexpr uint64_t kRotationBytes = 256ull << 20;
constexpr uint32_t kMaxRotationSets = 8;

}  // namespace vkattn::check

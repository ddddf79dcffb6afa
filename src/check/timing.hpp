// GPU timing of a recorded command buffer, shared by every case family.
#pragma once

#include <cstdint>

#include "vkattn/recorder.hpp"

namespace vkattn::check {

struct ReplayTiming {
  double median_ms = 0.0, min_ms = 0.0, max_ms = 0.0;
  int runs = 0;
  double warmup_ms = 0.0;  // wall time spent warming up
};

// Replays `rec` (already recorded, with timestamps t0 and t1 around the work)
// until the GPU's clocks are stable, then `runs` times, and returns the
// median, min and max GPU milliseconds of those runs.
//
// Warm-up: a GPU left idle (while the host built the previous case or ran its
// oracle) clocks down, and a few short replays do not bring it back up. So
// replays run in windows of at least kWindowMs until the median of a window is
// within kStableFraction of the previous one, for at least kWarmupMs of wall
// time after an idle gap of kIdleGapMs (kWarmupShortMs otherwise) and at most
// kWarmupMaxMs.
ReplayTiming time_replays(Recorder& rec, uint32_t t0, uint32_t t1, int runs);
double median_replay_ms(Recorder& rec, uint32_t t0, uint32_t t1, int runs);

constexpr double kWarmupMs = 200.0;
constexpr double kWarmupShortMs = 20.0;
constexpr double kWarmupMaxMs = 2000.0;
constexpr double kIdleGapMs = 50.0;
constexpr double kWindowMs = 5.0;
constexpr double kStableFraction = 0.02;

}  // namespace vkattn::check

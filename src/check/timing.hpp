// GPU timing of a recorded command buffer, shared by every case family.
#pragma once

#include <cstdint>

#include "vkattn/recorder.hpp"

namespace vkattn::check {

// Replays `rec` (already recorded, with timestamps t0 and t1 around the work)
// `runs` times after a warm-up and returns the median GPU milliseconds.
// The warm-up lasts at least kWarmupMs of wall time as well as 2 replays: a GPU
// left idle (while the CPU oracle of the previous case ran) clocks down, and a
// few short replays do not bring it back up.
double median_replay_ms(Recorder& rec, uint32_t t0, uint32_t t1, int runs);

constexpr double kWarmupMs = 200.0;

}  // namespace vkattn::check

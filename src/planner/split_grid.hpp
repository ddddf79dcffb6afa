// How many KV splits a split-KV decode call gets: enough workgroups to fill
// the device for the longest length a replay may read, none shorter than a
// useful chunk. Shared by the engines that write split partials.
#pragma once

#include <cstdint>

#include "planner/text_planner.hpp"

namespace vkattn::planner {

// Every split policy's keys per split is a multiple of this many keys, so two
// host lengths with the same split_length_bucket get the same split count from
// every policy (the plan cache keys host-length decode calls by it: a growing
// decode re-plans once per bucket, not once per token).
constexpr uint32_t kSplitLengthGranule = 16;
constexpr uint32_t split_length_bucket(uint32_t kv_len) {
  return kv_len / kSplitLengthGranule + (kv_len % kSplitLengthGranule != 0);
}

struct SplitPolicy {
  uint32_t workgroups_per_compute_unit;  // the grid the device should see, per compute unit
  uint32_t min_keys_per_split;           // a split shorter than this costs more than it hides (rounded up to the granule)
  uint32_t keys_per_split_unknown_device;  // devices that do not report compute units
  // Round the split count down, so the grid stays within one wave of
  // workgroups_per_compute_unit per compute unit (a workgroup past it would
  // run after the wave, doubling the time), never below one split.
  bool within_one_wave = false;
};

// Past this many splits the reduce dispatch is faster than the last split
// combining the partials: the last workgroup's loads grow with the split
// count while the reduce walks splits in parallel. H200, one run, against the
// reduce: 1.07-1.27x at 2-16 splits on decode_stream, 0.57-0.91x at 32-64
// (MQA B1); decode_flash 0.92-1.05x at 17 and 0.81-0.95x at 64-128.
constexpr uint32_t kMostSplitsTheLastCombines = 16;

// `workgroups_per_split` workgroups run each split (batch x heads of the grid).
uint32_t device_filling_splits(const DeviceCaps& caps, const TextShape& s, uint64_t workgroups_per_split,
                               const SplitPolicy& policy);

}  // namespace vkattn::planner

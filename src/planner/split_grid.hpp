// How many KV splits a split-KV decode call gets: enough workgroups to fill
// the device for the longest length a replay may read, none shorter than a
// useful chunk. Shared by the engines that write split partials.
#pragma once

#include <cstdint>

#include "planner/text_planner.hpp"
#include "shaders/text_attention_interface.h"

namespace vkattn::planner {

// Every split policy's keys per split is a multiple of this many keys, so two
// host lengths with the same split_length_bucket get the same split count from
// every policy (the plan cache keys host-length decode calls by it: a growing
// decode re-plans once per bucket, not once per token).
constexpr uint32_t kSplitLengthGranule = 16;
constexpr uint32_t split_length_bucket(uint32_t kv_len) {
  return kv_len / kSplitLengthGranule + (kv_len % kSplitLengthGranule != 0);
}

// Keys one split-KV workgroup of the scalar engines walks at most: the
// flash-decoding chunk measured on the H200 (see text_geometry), so long
// contexts fill the device. The BDPA planner splits by the same chunk.
constexpr uint32_t kSplitChunkKeys = 128;
static_assert(kSplitChunkKeys % kSplitLengthGranule == 0, "split counts must be constant per split_length_bucket");

// The most splits per sequence the dispatch grid holds (its z is batch x
// splits), at least one.
uint32_t split_grid_cap(const DeviceCaps& caps, const TextShape& s);

struct SplitPolicy {
  uint32_t workgroups_per_compute_unit;  // the grid the device should see, per compute unit
  uint32_t min_keys_per_split;           // a split shorter than this costs more than it hides (rounded up to the granule)
  uint32_t keys_per_split_unknown_device;  // devices that do not report compute units
  // Round the split count down, so the grid stays within one wave of
  // workgroups_per_compute_unit per compute unit (a workgroup past it would
  // run after the wave, doubling the time), never below one split.
  bool within_one_wave = false;
};

// The last split to finish combines the partials (text_split_combine.glsl)
// while each invocation of its merge reads at most two rounds of
// TEXT_LAST_SPLIT_MERGE_LOADS partials; past that the reduce dispatch, which
// walks the splits over many workgroups, is faster. H100, 2026-12-05, one run,
// decode_stream against the reduce at the same split count: MQA B1 D64 L4096
// 32 splits (16 partials per invocation) 12.0 against 15.7 us, 64 splits (32)
// 13.0 against 15.3; D128 32 splits (32) 17.4 against 19.4, 64 (64) 18.3
// against 18.0, 132 (132) 23.3 against 18.4; D256 32 splits (96) 25.2 against
// 22.0.
constexpr uint32_t kMostPartialsPerMergingInvocation = 2 * TEXT_LAST_SPLIT_MERGE_LOADS;

// Partials one invocation of the last split's merge reads for a geometry of
// `splits` splits (the lanes per column of TEXT_LAST_SPLIT_LANES, as
// text_split_combine.glsl counts them).
uint32_t last_split_partials_per_invocation(const TextGeometry& g, uint32_t head_dim, uint32_t splits);

// Whether the last split combines `splits` partials itself.
inline bool last_split_combines(const TextGeometry& g, uint32_t head_dim, uint32_t splits) {
  return last_split_partials_per_invocation(g, head_dim, splits) <= kMostPartialsPerMergingInvocation;
}
// Whether it does so in one round of loads per invocation.
inline bool last_split_merges_in_one_round(const TextGeometry& g, uint32_t head_dim, uint32_t splits) {
  return last_split_partials_per_invocation(g, head_dim, splits) <= TEXT_LAST_SPLIT_MERGE_LOADS;
}

// `workgroups_per_split` workgroups run each split (batch x heads of the grid).
uint32_t device_filling_splits(const DeviceCaps& caps, const TextShape& s, uint64_t workgroups_per_split,
                               const SplitPolicy& policy);

}  // namespace vkattn::planner

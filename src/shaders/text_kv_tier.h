// The position rule of tiered (hot/cold) KV caches, written once in the
// common subset of GLSL and C++ so the kernels, the oracle and the writers of
// a cache agree on it.
//
// A sequence's total keys (kv_len, clamped to the cache) sit at positions
// kv_start .. kv_start + total - 1. The last min(total, hot_window) of them are
// read from the hot ring, the others from the cold tier: one softmax runs over
// [cold | hot]. Every token is written to both tiers (docs/data-contract.md),
// so a token that leaves the hot window is already in the cold tier.
#ifndef VKATTN_TEXT_KV_TIER_H
#define VKATTN_TEXT_KV_TIER_H

#ifdef __cplusplus
#include <cstdint>
namespace vkattn::text {
using uint = uint32_t;
#define TEXT_TIER_FN inline
#else
#define TEXT_TIER_FN
#endif

// Key index (0-based from kv_start) of the first hot key: keys j >= this are hot.
TEXT_TIER_FN uint text_tier_hot_from(uint total, uint hot_window) {
  return total > hot_window ? total - hot_window : 0u;
}

// Slot of the hot ring that holds absolute position pos (hot_window > 0).
TEXT_TIER_FN uint text_tier_hot_slot(uint pos, uint hot_window) { return pos % hot_window; }

#ifdef __cplusplus
}  // namespace vkattn::text
#endif
#undef TEXT_TIER_FN

#endif

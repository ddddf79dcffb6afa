// Float64 oracle for text-decoder attention (DESIGN.md §2): the judge of
// every text-attention test. Written for obvious correctness, not speed.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "vkattn/text.hpp"

namespace vkattn::reference {

// Attention of q [B, S, H, D] over the cache described by p, returned as
// [B, S, H, D]. k and v are laid out per p.layout:
//   contiguous, ring: [B, C, Hkv, D] with C = p.kv_capacity;
//   paged:            pool [P, page_size, Hkv, D] with page_size = p.kv_capacity,
//                     P = p.num_pages; page_table is [B, p.max_pages].
//   tiered:           the cold tier as p.cold_layout above, and the hot ring
//                     hot_k, hot_v [B, hot_window, Hkv, D]; the last
//                     min(kv_len, hot_window) keys come from the hot ring.
// Quantized or 16-bit caches are passed already widened (and rounded) to f32.
// Throws Error(invalid_argument) naming the parameter on a shape mismatch, a
// cache too small for kv_start + kv_len, or a page-table entry >= num_pages
// (only the entries that hold a key are read and checked).
std::vector<double> text_attention(const TextAttentionParams& p, std::span<const float> q,
                                   std::span<const float> k, std::span<const float> v,
                                   std::span<const uint32_t> page_table = {}, std::span<const float> hot_k = {},
                                   std::span<const float> hot_v = {});

}  // namespace vkattn::reference

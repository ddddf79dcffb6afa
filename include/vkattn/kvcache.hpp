// Writing KV caches on the GPU (kv_append), the int8/int4 quantized cache
// format, and a page allocator for paged caches.
//
// Quantized caches (doppler's format, so caches are interchangeable): K and V
// are i8 or i4 tensors of the cache's shape ([B, C, Hkv, D] or the pool
// [P, page_size, Hkv, D]), dense, each (token, KV head) row packed
// little-endian into packed_stride = ceil(D/4) (i8) or ceil(D/8) (i4) u32
// words; k_scale and v_scale are f16 [rows, Hkv] with one scale per row, or
// [rows, Hkv, ceil(D/32)] with quant_group 32. scale = absmax/127 (i8) or
// absmax/7 (i4) rounded to f16 (1 for an all-zero row, never flushed to 0);
// code = round-half-even(x / scale) clamped, with the rounded scale.
#pragma once

#include <cstdint>
#include <vector>

#include "vkattn/export.hpp"
#include "vkattn/tensor.hpp"
#include "vkattn/text.hpp"

namespace vkattn {

class Recorder;
class Context;
class PageAllocator;

// One write of new tokens: T tokens for each of B sequences (a prefill chunk
// with B = 1, or one decode token per sequence with T = 1). Token t of
// sequence b goes to position positions[b] + t.
struct VKATTN_API KvAppendParams {
  uint32_t batch = 1;
  uint32_t tokens = 1;        // T
  uint32_t num_kv_heads = 1;  // Hkv
  uint32_t head_dim = 64;     // D, a multiple of 8 up to 512
  KvLayout layout = KvLayout::contiguous;
  uint32_t kv_capacity = 0;   // contiguous/ring: C slots per sequence; paged: page_size (tiered: of the cold tier)
  uint32_t num_pages = 0;     // paged: P pages in the pool
  uint32_t max_pages = 0;     // paged: page-table row length
  uint32_t quant_group = 0;   // i8/i4 caches: 0 one scale per row, 32 one per 32 elements
  std::vector<uint32_t> positions{0};  // one for all sequences or one each; replaced by a GPU buffer if given
  // Paged with host positions: every page written must be allocated here (a freed page is an error).
  const PageAllocator* pages = nullptr;
  // tiered: every token goes to its cold slot (cold_layout, the cache's dtype)
  // and to hot slot position % hot_window of the f16 hot ring; of a chunk
  // longer than the ring only the last hot_window tokens reach the ring.
  uint32_t hot_window = 0;
  KvLayout cold_layout = KvLayout::contiguous;

  // The layout the cache slots (the cold tier's, for tiered) are addressed by.
  KvLayout slot_layout() const { return layout == KvLayout::tiered ? cold_layout : layout; }
};

struct KvAppendTensors {
  Tensor k, v;                // new rows [B, T, Hkv, D]: f32 | f16 | bf16
  Tensor cache_k, cache_v;    // f32 | f16 | bf16 | i8 | i4, laid out per layout (tiered: the cold tier)
  Tensor k_scale, v_scale;    // i8/i4 caches: f16 scales
  Tensor page_table;          // paged: u32 [B, max_pages]
  Tensor positions;           // optional u32 [B]: positions on the GPU (a replayed decode step);
                              // a position the cache cannot hold is skipped there, never written out of bounds
  Tensor hot_k, hot_v;        // tiered: the hot ring, f16 [B, hot_window, Hkv, D]
};

// Validates and records the write (no submit): one dispatch, for a tiered
// cache too. Host positions past the cache (contiguous: position + T > C;
// paged: past max_pages * page_size, or on a page outside the pool or, with
// `pages`, not allocated; tiered: the same for its cold tier) and rings given
// more tokens than slots are Errors naming the value.
VKATTN_API void kv_append(Recorder& rec, const KvAppendParams& params, const KvAppendTensors& tensors);

// Bytes one token occupies in one layer's K and V cache of this dtype,
// scales included (i8/i4: quant_group as in KvAppendParams).
VKATTN_API uint64_t kv_bytes_per_token(DType kv, uint32_t num_kv_heads, uint32_t head_dim, uint32_t quant_group = 0);

// Host page allocator of a paged pool: pages are handed to sequences in order
// of position and returned whole; the page table lives on the GPU (entries
// without a page hold 0xffffffff, which every kernel masks).
class VKATTN_API PageAllocator {
 public:
  PageAllocator(Context& ctx, uint32_t num_pages, uint32_t page_size, uint32_t batch, uint32_t max_pages);

  // Sequence b holds positions [0, length) afterwards; throws Error when the
  // pool or the table row is out of pages.
  void reserve(uint32_t b, uint64_t length);
  // Returns every page of sequence b to the pool.
  void release(uint32_t b);
  // The GPU page table u32 [batch, max_pages], uploaded if it changed.
  const Tensor& table();
  const std::vector<uint32_t>& host_table() const { return table_; }
  uint32_t free_pages() const { return uint32_t(free_.size()); }

  // Throws Error naming the entry if a position of [first, first + count) of
  // sequence b is on a page it does not hold (freed or never given).
  void check(uint32_t b, uint64_t first, uint64_t count) const;
  // Throws Error naming the entry if `table` ([batch, max_pages]) holds a page
  // where this allocator holds a different one or none (a freed page still in a table).
  void check_table(const std::vector<uint32_t>& table) const;

 private:
  Context* ctx_;
  uint32_t num_pages_, page_size_, batch_, max_pages_;
  std::vector<uint32_t> table_;
  std::vector<uint32_t> free_;  // a stack: the most recently freed page is reused first
  Tensor gpu_;
  bool dirty_ = true;
};

}  // namespace vkattn

// The keys a query (or a run of queries) may see, shared by the text kernels.
//
// kv_len, start_pos and kv_start may come from GPU buffers the host never saw,
// and window is any u32: every step here is unsigned and checked before it
// could wrap, so hostile values give an empty or clamped range, never an index
// outside the cache. Positions are u32 with TEXT_INVALID_POS (2^32 - 1)
// reserved, so a valid position is at most 2^32 - 2.
//
// Key j (0 <= j < kv_len) sits at position kv_start + j.

const uint TEXT_INVALID_POS = 0xffffffffu;

// Keys addressable from kv_start: a ring holds at most capacity keys (its
// slots), contiguous and paged caches end at capacity or max_pages * page_size.
// Positions must also stay below TEXT_INVALID_POS.
uint text_key_limit(uint kv_layout, uint capacity, uint max_pages, uint kv_start) {
  uint room = TEXT_INVALID_POS - kv_start;  // kv_start + room == TEXT_INVALID_POS
  if (kv_layout == TEXT_LAYOUT_RING) return min(capacity, room);
  // max_pages * page_size saturated at 2^32 - 1 (the host bounds it; the kernel does not rely on that).
  uint slots = kv_layout == TEXT_LAYOUT_PAGED ? (max_pages > TEXT_INVALID_POS / capacity ? TEXT_INVALID_POS
                                                                                        : max_pages * capacity)
                                           : capacity;
  return kv_start >= slots ? 0u : min(slots - kv_start, room);
}

// Position of query row qi, or TEXT_INVALID_POS when start_pos + qi is not a
// valid position (that row sees no key and outputs zeros).
uint text_query_pos(uint start_pos, uint qi) {
  return qi >= TEXT_INVALID_POS - start_pos ? TEXT_INVALID_POS : start_pos + qi;
}

// Whether the query at qpos sees the key at kpos. The window test is written as
// a difference so it cannot wrap for windows near 2^32.
bool text_key_visible(uint qpos, uint kpos, uint window, bool causal) {
  if (kpos == TEXT_INVALID_POS || qpos == TEXT_INVALID_POS) return false;
  if (causal && kpos > qpos) return false;
  if (window > 0u && qpos >= kpos && qpos - kpos >= window) return false;
  return true;
}

// [lo, hi) of key indices j that any query at positions q_first..q_last can see
// (q_first <= q_last), kv_len clamped to the layout. q_first TEXT_INVALID_POS:
// no key; q_last TEXT_INVALID_POS: the run goes past the last valid position
// (its rows past it see nothing, the others still count). Keys inside the
// range may still be masked for some queries (text_key_visible decides per pair).
uvec2 text_key_range(uint kv_len, uint kv_start, uint q_first, uint q_last, uint window, bool causal,
                     uint kv_layout, uint capacity, uint max_pages) {
  if (q_first == TEXT_INVALID_POS) return uvec2(0u);
  q_last = min(q_last, TEXT_INVALID_POS - 1u);
  uint hi = min(kv_len, text_key_limit(kv_layout, capacity, max_pages, kv_start));
  if (causal) hi = q_last < kv_start ? 0u : min(hi, q_last - kv_start + 1u);  // q_last <= 2^32 - 2: no wrap
  uint lo = 0u;
  if (window > 0u && q_first >= window) {
    uint first_pos = q_first - window + 1u;  // the oldest position the window keeps
    lo = first_pos > kv_start ? first_pos - kv_start : 0u;
  }
  return lo < hi ? uvec2(lo, hi) : uvec2(0u);
}

// The part of [range.x, range.y) that split `split` of `splits` owns: equal
// chunks rounded up to whole multiples of `granule` keys (a workgroup's step,
// so no split ends mid-step; 1 for none), computed without forming
// split * chunk past the range. Splits past the end own nothing.
uvec2 text_split_range_in_steps(uvec2 range, uint split, uint splits, uint granule) {
  uint span = range.y - range.x;
  uint chunk = span / splits + (span % splits != 0u ? 1u : 0u);
  if (chunk <= TEXT_INVALID_POS - granule) chunk = (chunk + granule - 1u) / granule * granule;
  if (span == 0u || split > (span - 1u) / chunk) return uvec2(range.y);
  uint lo = range.x + split * chunk;  // split * chunk < span
  return uvec2(lo, lo + min(chunk, range.y - lo));
}

uvec2 text_split_range(uvec2 range, uint split, uint splits) { return text_split_range_in_steps(range, split, splits, 1u); }

// Whether every query (positions q_first..q_last, both valid) sees every key
// of the tile of `tile` keys starting at key index j0, so a tiled kernel
// skips the per-pair mask there. j0 + tile <= j_hi keeps every position below
// TEXT_INVALID_POS, so nothing here wraps. A paged tile may still hold keys
// behind a bad page entry, masked one by one: the paged kernels also ask that.
bool text_tile_whole(uint j0, uint tile, uint j_hi, uint kv_start, uint q_first, uint q_last, uint window,
                     bool causal) {
  if (j0 + tile > j_hi || q_last == TEXT_INVALID_POS) return false;
  const uint k_first = kv_start + j0, k_last = k_first + tile - 1u;
  if (causal && k_last > q_first) return false;
  return window == 0u || q_last < k_first || q_last - k_first < window;
}

// Where tensors' rows live and how K/V words are read, shared by the text
// kernels. Include after the push constants (pc), LAYOUT, KV_TYPE, D, the
// page_table binding and text_key_range.glsl. Offsets are in elements; strides
// are multiples of 8, so a row starts on a 16-byte word for every storage type.
//
// K and V are storage-buffer bindings, or, in modules built with
// KV_BY_ADDRESS (GL_EXT_buffer_reference and _uvec2 enabled by the includer),
// pools read through their device addresses, so a pool may be larger than one
// binding: row addresses are 64-bit (uvec2) sums of byte offsets, and every
// load stays a 16-byte (or 8-byte) aligned vector load.
#include "text_kv_tier.h"

layout(std430, binding = TEXT_BIND_K) readonly buffer KWords4 { uvec4 k_words4[]; };
layout(std430, binding = TEXT_BIND_K) readonly buffer KWords2 { uvec2 k_words2[]; };
layout(std430, binding = TEXT_BIND_V) readonly buffer VWords4 { uvec4 v_words4[]; };
layout(std430, binding = TEXT_BIND_V) readonly buffer VWords2 { uvec2 v_words2[]; };
// The tiered layout's hot ring, f16 [B, hot_window, Hkv, D].
layout(std430, binding = TEXT_BIND_HOT_K) readonly buffer HotKWords4 { uvec4 hot_k_words4[]; };
layout(std430, binding = TEXT_BIND_HOT_K) readonly buffer HotKWords2 { uvec2 hot_k_words2[]; };
layout(std430, binding = TEXT_BIND_HOT_V) readonly buffer HotVWords4 { uvec4 hot_v_words4[]; };
layout(std430, binding = TEXT_BIND_HOT_V) readonly buffer HotVWords2 { uvec2 hot_v_words2[]; };
#ifdef KV_BY_ADDRESS
layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer KvAt4 { uvec4 w[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer KvAt2 { uvec2 w[]; };
layout(std430, binding = TEXT_BIND_KV_ADDRESS) readonly buffer KvBase { uvec2 k_base, v_base; };

uvec2 addr_add(uvec2 a, uvec2 b) {
  uint carry;
  uint lo = uaddCarry(a.x, b.x, carry);
  return uvec2(lo, a.y + b.y + carry);
}
uvec2 addr_mul(uint a, uint b) {
  uint hi, lo;
  umulExtended(a, b, hi, lo);
  return uvec2(lo, hi);
}
// Byte address of row (outer, inner, kvh) from element strides (the host
// checks that each stride in bytes fits 32 bits).
uvec2 kv_row_addr(uvec2 base, uint outer, uint inner, uint kvh, uint s0, uint s1, uint s2) {
  const uint bytes = KV_TYPE == DTYPE_F32 ? 4u : 2u;
  return addr_add(addr_add(addr_add(base, addr_mul(outer, s0 * bytes)), addr_mul(inner, s1 * bytes)),
                  addr_mul(kvh, s2 * bytes));
}
#endif

// The layout the (cold) slots follow: a tiered cache keeps its older keys in a
// contiguous or paged cold tier.
uint kv_slot_layout() {
  if (LAYOUT != TEXT_LAYOUT_TIERED) return LAYOUT;
  return (pc.flags & TEXT_FLAG_COLD_PAGED) != 0u ? TEXT_LAYOUT_PAGED : TEXT_LAYOUT_CONTIGUOUS;
}

// First position of the hot tier for the sequence being walked: set once per
// workgroup by kv_tier_begin (no key is hot until then, nor in other layouts).
uint kv_hot_from = TEXT_INVALID_POS;

// kv_len as given (maybe from a GPU buffer): clamped to the cold tier's slots
// like every key range, so the hot tier is the last keys the kernel can see.
void kv_tier_begin(uint kv_len, uint kv_start) {
  if (LAYOUT != TEXT_LAYOUT_TIERED) return;
  uint total = min(kv_len, text_key_limit(kv_slot_layout(), pc.capacity, pc.max_pages, kv_start));
  kv_hot_from = kv_start + text_tier_hot_from(total, pc.hot_window);  // <= kv_start + total: no wrap
}

bool kv_hot(uint pos) { return LAYOUT == TEXT_LAYOUT_TIERED && pos >= kv_hot_from; }

// Storage type of a row: the hot ring is f16 whatever the cold tier holds.
uint kv_row_type(bool hot) { return LAYOUT == TEXT_LAYOUT_TIERED && hot ? DTYPE_F16 : KV_TYPE; }

// (outer, inner) of key position `pos` of sequence b: (sequence, slot) for
// contiguous, ring and hot-tier rows, (page, row) for paged ones. False behind
// a page entry outside the pool: that key is never read.
bool kv_coords(uint b, uint pos, out uint outer, out uint inner) {
  if (kv_hot(pos)) {
    outer = b;
    inner = text_tier_hot_slot(pos, pc.hot_window);
    return true;
  }
  if (kv_slot_layout() == TEXT_LAYOUT_PAGED) {
    uint page = page_table[b * pc.max_pages + pos / pc.capacity];
    outer = page;
    inner = pos % pc.capacity;
    return page < pc.num_pages;
  }
  outer = b;
  inner = LAYOUT == TEXT_LAYOUT_RING ? pos % pc.capacity : pos;
  return true;
}

uint k_row_elem(uint outer, uint inner, uint kvh) {
  return outer * pc.k_strides[0] + inner * pc.k_strides[1] + kvh * pc.k_strides[2];
}
uint v_row_elem(uint outer, uint inner, uint kvh) {
  return outer * pc.v_strides[0] + inner * pc.v_strides[1] + kvh * pc.v_strides[2];
}
// Hot K and V share one packed shape [B, hot_window, Hkv, D].
uint hot_row_elem(uint outer, uint inner, uint kvh) { return ((outer * pc.hot_window + inner) * pc.num_kv_heads + kvh) * D; }

// The K and V rows of key position `pos`: element offsets in their tier's
// buffers (hot: hot_k/hot_v, else k/v), or for a cold row of a KV_BY_ADDRESS
// module its byte addresses. False as kv_coords. Read with kv_word4/kv_word2.
struct KvRow {
  uint k;
  uint v;
  bool hot;
  uvec2 k_at;
  uvec2 v_at;
};
// Row 0 of the cold tier: what a key that is not read points at, so no
// address formed for it leaves the buffers.
KvRow kv_row_none() {
#ifdef KV_BY_ADDRESS
  return KvRow(0u, 0u, false, k_base, v_base);
#else
  return KvRow(0u, 0u, false, uvec2(0u), uvec2(0u));
#endif
}

bool kv_row(uint b, uint pos, uint kvh, out KvRow row) {
  uint outer, inner;
  bool ok = kv_coords(b, pos, outer, inner);
  row.hot = kv_hot(pos);
  row.k = row.hot ? hot_row_elem(outer, inner, kvh) : k_row_elem(outer, inner, kvh);
  row.v = row.hot ? hot_row_elem(outer, inner, kvh) : v_row_elem(outer, inner, kvh);
#ifdef KV_BY_ADDRESS
  row.k_at = kv_row_addr(k_base, outer, inner, kvh, pc.k_strides[0], pc.k_strides[1], pc.k_strides[2]);
  row.v_at = kv_row_addr(v_base, outer, inner, kvh, pc.v_strides[0], pc.v_strides[1], pc.v_strides[2]);
#else
  row.k_at = row.v_at = uvec2(0u);
#endif
  if (!ok) row = kv_row_none();  // behind a bad page: no offset or address formed from it
  return ok;
}

// 16-byte word w of a K (is_k) or V row.
uvec4 kv_word4(bool is_k, KvRow r, uint w) {
  // The layout test first: other layouts compile the hot branch away even
  // where the tier flag passes through arrays.
  if (LAYOUT == TEXT_LAYOUT_TIERED && r.hot) return is_k ? hot_k_words4[r.k / 8u + w] : hot_v_words4[r.v / 8u + w];
#ifdef KV_BY_ADDRESS
  return KvAt4(is_k ? r.k_at : r.v_at).w[w];
#else
  const uint epw = KV_TYPE == DTYPE_F32 ? 4u : 8u;
  return is_k ? k_words4[r.k / epw + w] : v_words4[r.v / epw + w];
#endif
}

// 8-byte half word h of a K (is_k) or V row.
uvec2 kv_word2(bool is_k, KvRow r, uint h) {
  if (LAYOUT == TEXT_LAYOUT_TIERED && r.hot) return is_k ? hot_k_words2[r.k / 4u + h] : hot_v_words2[r.v / 4u + h];
#ifdef KV_BY_ADDRESS
  return KvAt2(is_k ? r.k_at : r.v_at).w[h];
#else
  const uint eph = KV_TYPE == DTYPE_F32 ? 2u : 4u;
  return is_k ? k_words2[r.k / eph + h] : v_words2[r.v / eph + h];
#endif
}

uint q_row_elem(uint b, uint qi, uint h) { return b * pc.q_strides[0] + qi * pc.q_strides[1] + h * pc.q_strides[2]; }
uint o_row_elem(uint b, uint qi, uint h) { return b * pc.o_strides[0] + qi * pc.o_strides[1] + h * pc.o_strides[2]; }

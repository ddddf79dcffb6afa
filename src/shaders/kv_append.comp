#version 450
// Writes the K/V rows of new tokens into a KV cache, converting on the way
// (f32/f16/bf16 -> f32/f16/bf16/int8/int4). One workgroup per (token, KV head,
// sequence); invocation u owns elements 8u..8u+7 of the row.
//   step 1: where the token goes: position(b) + t, through the layout (a
//           tiered cache's cold tier); a position the cache cannot hold (past
//           a contiguous cache, a page index past the table, a page outside
//           the pool) is not written, in neither tier;
//   step 2: float caches: convert and store;
//   step 3: quantized caches: absmax of each row or group of KV_QUANT_GROUP
//           (shared memory), the f16 scale, then the codes computed with that
//           rounded scale, packed little-endian;
//   step 4: tiered (HOT_RING): the same row in f16 to hot slot
//           text_tier_hot_slot(pos), for the last hot_window tokens of the
//           chunk only (earlier ones would be overwritten in the same call,
//           by another workgroup in no set order).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable

#define TEXT_CODES_ONLY
#include "text_attention_interface.h"
#include "kv_append_interface.h"
#include "text_common.glsl"
#include "text_key_range.glsl"
#include "kv_quant_scale.glsl"
#include "text_kv_tier.h"

layout(constant_id = KVA_SC_HEAD_DIM) const uint D = 64;
layout(constant_id = KVA_SC_SRC_TYPE) const uint SRC_TYPE = DTYPE_F32;
layout(constant_id = KVA_SC_DST_TYPE) const uint DST_TYPE = DTYPE_F16;
layout(constant_id = KVA_SC_LAYOUT) const uint LAYOUT = TEXT_LAYOUT_CONTIGUOUS;
layout(constant_id = KVA_SC_GROUP) const uint GROUP = KV_QUANT_GROUP_ROW;
layout(constant_id = KVA_SC_HOT_RING) const bool HOT_RING = false;

layout(local_size_x = KVA_WG_SIZE) in;

layout(std430, binding = KVA_BIND_SRC_K) readonly buffer SrcK { uvec4 src_k[]; };
layout(std430, binding = KVA_BIND_SRC_V) readonly buffer SrcV { uvec4 src_v[]; };
layout(std430, binding = KVA_BIND_DST_K) writeonly buffer DstK4 { uvec4 dst_k4[]; };
layout(std430, binding = KVA_BIND_DST_K) writeonly buffer DstK1 { uint dst_k1[]; };
layout(std430, binding = KVA_BIND_DST_V) writeonly buffer DstV4 { uvec4 dst_v4[]; };
layout(std430, binding = KVA_BIND_DST_V) writeonly buffer DstV1 { uint dst_v1[]; };
layout(std430, binding = KVA_BIND_K_SCALE) buffer KScale { uint k_scale[]; };
layout(std430, binding = KVA_BIND_V_SCALE) buffer VScale { uint v_scale[]; };
layout(std430, binding = KVA_BIND_PAGE_TABLE) readonly buffer PageTable { uint page_table[]; };
layout(std430, binding = KVA_BIND_POSITIONS) readonly buffer Positions { uint positions[]; };
layout(std430, binding = KVA_BIND_HOT_K) writeonly buffer HotK { uvec4 hot_k[]; };
layout(std430, binding = KVA_BIND_HOT_V) writeonly buffer HotV { uvec4 hot_v[]; };

const bool QUANT = DST_TYPE == DTYPE_INT8 || DST_TYPE == DTYPE_INT4;
const uint LANES = DST_TYPE == DTYPE_INT4 ? KV_QUANT_INT4_LANES : KV_QUANT_INT8_LANES;
const float CODE_MAX = DST_TYPE == DTYPE_INT4 ? float(KV_QUANT_INT4_MAX) : float(KV_QUANT_INT8_MAX);
const uint UNITS = D / KVA_UNIT;
const uint GROUP_UNITS = GROUP == KV_QUANT_GROUP_ROW ? UNITS : GROUP / KVA_UNIT;
const uint GROUPS = (UNITS + GROUP_UNITS - 1u) / GROUP_UNITS;

shared float unit_absmax[KVA_WG_SIZE];

void load_src(bool is_k, uint e, out vec4 lo, out vec4 hi) {
  if (SRC_TYPE == DTYPE_F32) {
    lo = uintBitsToFloat(is_k ? src_k[e / 4u] : src_v[e / 4u]);
    hi = uintBitsToFloat(is_k ? src_k[e / 4u + 1u] : src_v[e / 4u + 1u]);
  } else {
    unpack_words(SRC_TYPE, is_k ? src_k[e / 8u] : src_v[e / 8u], lo, hi);
  }
}

void store_words(bool is_k, uint word, uint w) {
  if (is_k) dst_k1[word] = w;
  else dst_v1[word] = w;
}

// One unit (8 elements) of a 16-bit dtype as four words.
uvec4 pack_unit(uint type, vec4 lo, vec4 hi) { return uvec4(pack_vec4(type, lo).xy, pack_vec4(type, hi).xy); }

void store_float(bool is_k, uint e, vec4 lo, vec4 hi) {
  if (DST_TYPE == DTYPE_F32) {
    if (is_k) {
      dst_k4[e / 4u] = floatBitsToUint(lo);
      dst_k4[e / 4u + 1u] = floatBitsToUint(hi);
    } else {
      dst_v4[e / 4u] = floatBitsToUint(lo);
      dst_v4[e / 4u + 1u] = floatBitsToUint(hi);
    }
  } else {
    const uvec4 w = pack_unit(DST_TYPE, lo, hi);
    if (is_k) dst_k4[e / 8u] = w;
    else dst_v4[e / 8u] = w;
  }
}

// Writes the 16 bits of scale `index` without touching its neighbour in the
// same word (another workgroup may be writing it).
void store_scale(bool is_k, uint index, uint bits) {
  const uint shift = 16u * (index & 1u);
  if (is_k) {
    atomicAnd(k_scale[index / 2u], ~(0xffffu << shift));
    atomicOr(k_scale[index / 2u], bits << shift);
  } else {
    atomicAnd(v_scale[index / 2u], ~(0xffffu << shift));
    atomicOr(v_scale[index / 2u], bits << shift);
  }
}

// Step 3 for the unit `u` of one row (called by every invocation: it has barriers).
void store_quantized(bool is_k, uint u, uint dst_row, vec4 lo, vec4 hi) {
  barrier();  // the previous row's absmax is no longer read
  unit_absmax[u] = abs_max8(lo, hi);
  barrier();
  if (u >= UNITS) return;
  const uint g = u / GROUP_UNITS;
  float absmax = 0.0;
  for (uint i = g * GROUP_UNITS; i < min((g + 1u) * GROUP_UNITS, UNITS); ++i) absmax = max(absmax, unit_absmax[i]);
  const uint bits = kvq_scale_bits(absmax, CODE_MAX);
  if (u == g * GROUP_UNITS) store_scale(is_k, dst_row * GROUPS + g, bits);
  const float s = kvq_scale_value(bits);
  const float x[8] = float[8](lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w);
  const uint code_bits = 32u / LANES;
  uint w0 = 0u, w1 = 0u;
  [[unroll]] for (uint i = 0; i < 8u; ++i) {
    const int c = int(clamp(roundEven(x[i] / s), -CODE_MAX, CODE_MAX));
    const uint field = (uint(c) & ((1u << code_bits) - 1u)) << (code_bits * (i % LANES));
    if (i < LANES) w0 |= field;
    else w1 |= field;
  }
  const uint word = (dst_row * D + u * KVA_UNIT) / LANES;
  store_words(is_k, word, w0);
  if (LANES == KV_QUANT_INT8_LANES) store_words(is_k, word + 1u, w1);
}

void main() {
  const uint u = gl_LocalInvocationID.x;
  const uint t = gl_WorkGroupID.x, kvh = gl_WorkGroupID.y, b = gl_WorkGroupID.z;
  if (t >= pc.tokens || kvh >= pc.num_kv_heads || b >= pc.batch) return;

  // Step 1: the slot, or nothing (uniform across the workgroup).
  const uint first = (pc.flags & KVA_FLAG_POSITIONS_BUFFER) != 0u ? positions[b] : pc.position;
  const uint pos = text_query_pos(first, t);  // TEXT_INVALID_POS past 2^32 - 2
  if (pos == TEXT_INVALID_POS) return;
  uint outer = b, inner = pos;
  if (LAYOUT == TEXT_LAYOUT_CONTIGUOUS && pos >= pc.capacity) return;
  if (LAYOUT == TEXT_LAYOUT_RING) inner = pos % pc.capacity;
  if (LAYOUT == TEXT_LAYOUT_PAGED) {
    const uint index = pos / pc.capacity;
    if (index >= pc.max_pages) return;
    outer = page_table[b * pc.max_pages + index];
    if (outer >= pc.num_pages) return;
    inner = pos % pc.capacity;
  }
  const uint src_row = (b * pc.tokens + t) * pc.num_kv_heads + kvh;
  const uint dst_row = (outer * pc.capacity + inner) * pc.num_kv_heads + kvh;
  const bool to_hot = HOT_RING && pc.tokens - t <= pc.hot_window;  // t < tokens: no wrap
  const uint hot_slot = to_hot ? b * pc.hot_window + text_tier_hot_slot(pos, pc.hot_window) : 0u;
  const uint hot_row = hot_slot * pc.num_kv_heads + kvh;

  [[unroll]] for (uint which = 0; which < 2u; ++which) {
    const bool is_k = which == 0u;
    vec4 lo = vec4(0.0), hi = vec4(0.0);
    if (u < UNITS) load_src(is_k, src_row * D + u * KVA_UNIT, lo, hi);
    if (QUANT) {
      store_quantized(is_k, u, dst_row, lo, hi);
    } else if (u < UNITS) {
      store_float(is_k, dst_row * D + u * KVA_UNIT, lo, hi);  // step 2
    }
    if (to_hot && u < UNITS) {  // step 4
      const uvec4 w = pack_unit(DTYPE_F16, lo, hi);
      if (is_k) hot_k[(hot_row * D + u * KVA_UNIT) / 8u] = w;
      else hot_v[(hot_row * D + u * KVA_UNIT) / 8u] = w;
    }
  }
}

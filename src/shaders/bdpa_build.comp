#version 450
// Builds a BDPA cache on the GPU from a contiguous pre-RoPE one ([B, C, Hkv, D],
// position j of sequence b in slot j), without the host reading anything back.
// One source; BDPA_BUILD_SC_PASS picks the pass, recorded in this order:
//   LINK:     per position: push it onto its token's list (an atomic exchange
//             on the list head gives a linked list per token);
//   SLOTS:    one workgroup scans the vocabulary: every token with a list gets
//             the next basis row, so basis rows follow token-id order;
//   BASIS:    per (basis row, KV head): K and V rows of the token's positions
//             summed along its list, divided by their count, stored in BASIS_TYPE;
//   RESIDUAL: per (position, KV head): the row minus its basis row as stored,
//             quantized to int8 with scale absmax / 127 (1 for an all-zero
//             residual), and the index entry (basis row, residual row =
//             b * C + j, position j).
// A token id at or past vocab_size is skipped: its index entry names basis row
// BDPA_NONE, so attention never follows it.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable

#define TEXT_CODES_ONLY
#define BDPA_BUILD_SHADER
#include "text_attention_interface.h"
#include "bdpa_interface.h"
#include "text_common.glsl"

layout(constant_id = BDPA_BUILD_SC_PASS) const uint PASS = BDPA_PASS_LINK;
layout(constant_id = BDPA_BUILD_SC_WG_SIZE) const uint WG = 64;
layout(constant_id = BDPA_BUILD_SC_HEAD_DIM) const uint D = 64;
layout(constant_id = BDPA_BUILD_SC_KV_TYPE) const uint KV_TYPE = DTYPE_F32;
layout(constant_id = BDPA_BUILD_SC_BASIS_TYPE) const uint BASIS_TYPE = DTYPE_F16;

layout(local_size_x_id = BDPA_BUILD_SC_WG_SIZE) in;

layout(std430, binding = BDPA_BUILD_BIND_K) readonly buffer KBuf { uint k_in[]; };
layout(std430, binding = BDPA_BUILD_BIND_V) readonly buffer VBuf { uint v_in[]; };
layout(std430, binding = BDPA_BUILD_BIND_TOKENS) readonly buffer Tokens { uint tokens[]; };
layout(std430, binding = BDPA_BUILD_BIND_KV_LEN) readonly buffer KvLen { uint kv_len_buf[]; };
layout(std430, binding = BDPA_BUILD_BIND_HEAD) coherent buffer Head { uint head[]; };
layout(std430, binding = BDPA_BUILD_BIND_LINK) buffer Link { uint link[]; };
layout(std430, binding = BDPA_BUILD_BIND_SLOT) buffer Slot { uint slot[]; };
layout(std430, binding = BDPA_BUILD_BIND_TOKEN_OF) buffer TokenOf { uint token_of[]; };
layout(std430, binding = BDPA_BUILD_BIND_NUM_BASIS) buffer NumBasis { uint num_basis[]; };
layout(std430, binding = BDPA_BUILD_BIND_BASIS_K) buffer BasisK { uint basis_k[]; };
layout(std430, binding = BDPA_BUILD_BIND_BASIS_V) buffer BasisV { uint basis_v[]; };
layout(std430, binding = BDPA_BUILD_BIND_RESIDUAL_K) writeonly buffer ResidualK { uint residual_k[]; };
layout(std430, binding = BDPA_BUILD_BIND_RESIDUAL_V) writeonly buffer ResidualV { uint residual_v[]; };
layout(std430, binding = BDPA_BUILD_BIND_SCALE_K) writeonly buffer ScaleK { float scale_k[]; };
layout(std430, binding = BDPA_BUILD_BIND_SCALE_V) writeonly buffer ScaleV { float scale_v[]; };
layout(std430, binding = BDPA_BUILD_BIND_INDEX) writeonly buffer Index { uint index_words[]; };

const uint D4 = D / 4;
shared uint scan[WG];
shared float lane_max[WG];

uint kv_len_of(uint b) { return (pc.flags & BDPA_FLAG_KV_LEN_BUFFER) != 0u ? kv_len_buf[b] : pc.kv_len; }

// The token of flat position f = b * C + j, or BDPA_NONE when j is past the
// sequence's length or the id past the vocabulary.
uint token_at(uint f) {
  const uint b = f / pc.capacity, j = f % pc.capacity;
  if (j >= min(kv_len_of(b), pc.capacity)) return BDPA_NONE;
  const uint t = tokens[f];
  return t < pc.vocab_size ? t : BDPA_NONE;
}

// Four elements from element `at` (a multiple of 4) of a buffer in `type`.
vec4 decode4(uint type, bool is_v, bool is_basis, uint at) {
  if (type == DTYPE_F32) {
    uvec4 w;
    [[unroll]] for (uint i = 0; i < 4u; ++i)
      w[i] = is_basis ? (is_v ? basis_v[at + i] : basis_k[at + i]) : (is_v ? v_in[at + i] : k_in[at + i]);
    return uintBitsToFloat(w);
  }
  const uint a = at / 2u;
  const uint w0 = is_basis ? (is_v ? basis_v[a] : basis_k[a]) : (is_v ? v_in[a] : k_in[a]);
  const uint w1 = is_basis ? (is_v ? basis_v[a + 1u] : basis_k[a + 1u]) : (is_v ? v_in[a + 1u] : k_in[a + 1u]);
  if (type == DTYPE_F16) return vec4(unpackHalf2x16(w0), unpackHalf2x16(w1));
  return vec4(bf16x2_to_vec2(w0), bf16x2_to_vec2(w1));
}

void store_basis(bool is_v, uint at, vec4 x) {
  const uvec4 w = pack_vec4(BASIS_TYPE, x);
  const uint n = BASIS_TYPE == DTYPE_F32 ? 4u : 2u;
  const uint a = BASIS_TYPE == DTYPE_F32 ? at : at / 2u;
  [[unroll]] for (uint i = 0; i < 4u; ++i) {
    if (i >= n) break;
    if (is_v) basis_v[a + i] = w[i];
    else basis_k[a + i] = w[i];
  }
}

void pass_link() {
  const uint total = pc.batch * pc.capacity;
  for (uint f = gl_GlobalInvocationID.x; f < total; f += gl_NumWorkGroups.x * WG) {
    const uint t = token_at(f);
    if (t == BDPA_NONE) continue;
    link[f] = atomicExchange(head[t], f);
  }
}

void pass_slots() {
  const uint tid = gl_LocalInvocationID.x;
  uint total = 0u;
  for (uint base = 0u; base < pc.vocab_size; base += WG) {
    const uint t = base + tid;
    const uint used = t < pc.vocab_size && head[t] != BDPA_NONE ? 1u : 0u;
    // Inclusive scan of `used` over the workgroup (Hillis-Steele).
    scan[tid] = used;
    barrier();
    for (uint stride = 1u; stride < WG; stride *= 2u) {
      const uint add = tid >= stride ? scan[tid - stride] : 0u;
      barrier();
      scan[tid] += add;
      barrier();
    }
    const uint row = total + scan[tid] - used;
    if (t < pc.vocab_size) slot[t] = used != 0u ? row : BDPA_NONE;
    if (used != 0u) token_of[row] = t;
    total += scan[WG - 1u];
    barrier();
  }
  if (tid == 0u) num_basis[0] = total;
}

void pass_basis() {
  const uint kvh = gl_WorkGroupID.y;
  for (uint s = gl_WorkGroupID.x; s < min(num_basis[0], pc.max_rows); s += gl_NumWorkGroups.x) {
    const uint t = token_of[s];
    for (uint c = gl_LocalInvocationID.x; c < D4; c += WG) {
      vec4 sk = vec4(0.0), sv = vec4(0.0);
      uint count = 0u;
      for (uint f = head[t]; f != BDPA_NONE && count < pc.max_rows; f = link[f], ++count) {
        const uint at = (f * pc.num_kv_heads + kvh) * D + 4u * c;
        sk += decode4(KV_TYPE, false, false, at);
        sv += decode4(KV_TYPE, true, false, at);
      }
      const uint at = (s * pc.num_kv_heads + kvh) * D + 4u * c;
      store_basis(false, at, sk / float(max(count, 1u)));
      store_basis(true, at, sv / float(max(count, 1u)));
    }
  }
}

// Largest |x| over the workgroup (every invocation gets it).
float workgroup_max(float x) {
  const uint tid = gl_LocalInvocationID.x;
  barrier();
  lane_max[tid] = x;
  barrier();
  for (uint stride = WG / 2u; stride > 0u; stride /= 2u) {
    if (tid < stride) lane_max[tid] = max(lane_max[tid], lane_max[tid + stride]);
    barrier();
  }
  return lane_max[0];
}

// vec4 chunks of a row each invocation quantizes.
const uint CHUNKS = (D4 + WG - 1u) / WG;

void quantize_row(bool is_v, uint f, uint s, uint kvh) {
  const uint tid = gl_LocalInvocationID.x;
  vec4 r[CHUNKS];
  float m = 0.0;
  [[unroll]] for (uint k = 0; k < CHUNKS; ++k) {
    const uint c = tid + k * WG;
    r[k] = vec4(0.0);
    if (c < D4 && s != BDPA_NONE)
      r[k] = decode4(KV_TYPE, is_v, false, (f * pc.num_kv_heads + kvh) * D + 4u * c) -
             decode4(BASIS_TYPE, is_v, true, (s * pc.num_kv_heads + kvh) * D + 4u * c);
    if (c < D4) m = max(m, max(max(abs(r[k].x), abs(r[k].y)), max(abs(r[k].z), abs(r[k].w))));
  }
  m = workgroup_max(m);
  // A residual too small to divide by (or all zero) keeps scale 1 and quantizes to zeros.
  const float scale = m > 1e-30 ? m / float(BDPA_RESIDUAL_QMAX) : 1.0;
  const uint row = f * pc.num_kv_heads + kvh;
  [[unroll]] for (uint k = 0; k < CHUNKS; ++k) {
    const uint c = tid + k * WG;
    if (c >= D4) continue;
    const ivec4 q = ivec4(clamp(roundEven(r[k] / scale), -float(BDPA_RESIDUAL_QMAX), float(BDPA_RESIDUAL_QMAX)));
    const uint w = (uint(q.x) & 0xffu) | ((uint(q.y) & 0xffu) << 8) | ((uint(q.z) & 0xffu) << 16) |
                   ((uint(q.w) & 0xffu) << 24);
    if (is_v) residual_v[row * D4 + c] = w;
    else residual_k[row * D4 + c] = w;
  }
  if (tid == 0u) {
    if (is_v) scale_v[row] = scale;
    else scale_k[row] = scale;
  }
}

void pass_residual() {
  const uint kvh = gl_WorkGroupID.y;
  const uint total = pc.batch * pc.capacity;
  for (uint f = gl_WorkGroupID.x; f < total; f += gl_NumWorkGroups.x) {
    if (f % pc.capacity >= min(kv_len_of(f / pc.capacity), pc.capacity)) continue;
    const uint t = token_at(f);
    const uint s = t == BDPA_NONE ? BDPA_NONE : slot[t];
    quantize_row(false, f, s, kvh);
    quantize_row(true, f, s, kvh);
    if (kvh == 0u && gl_LocalInvocationID.x == 0u) {
      index_words[f * BDPA_INDEX_WORDS + BDPA_INDEX_BASIS] = s;
      index_words[f * BDPA_INDEX_WORDS + BDPA_INDEX_RESIDUAL] = f;
      index_words[f * BDPA_INDEX_WORDS + BDPA_INDEX_POSITION] = f % pc.capacity;
    }
  }
}

void main() {
  if (PASS == BDPA_PASS_LINK) pass_link();
  else if (PASS == BDPA_PASS_SLOTS) pass_slots();
  else if (PASS == BDPA_PASS_BASIS) pass_basis();
  else pass_residual();
}

#version 450
// Basis-decomposed paged attention (BDPA): each key and value row is rebuilt
// from a basis row shared by every occurrence of its token id plus an int8
// residual with its own scale, found through an index entry (basis row,
// residual row, original position). Keys are stored before RoPE and rotated
// here, once, at their original position; masks use that position too.
//
// A workgroup owns ROWS = Q_POS x HEAD_GROUP query rows sharing one KV head and
// one KV split, and walks its keys in tiles of TK:
//   step 1: the tile's index entries; an entry naming a row past the basis or
//           the residual pool, or a position past the RoPE tables, is a key
//           no query sees (never followed);
//   step 2: K and V rebuilt in f32 into shared memory (each residual and basis
//           element read once), then the keys rotated there; the tile serves
//           every query row of the workgroup;
//   step 3: scores for every (row, key) pair, masked and soft-capped;
//   step 4: online softmax per row;
//   step 5: each invocation rescales its slice of the output rows and adds P.V.
// With SPLIT the partials go to text_split_reduce.comp (the same format as the
// text kernels'), so long contexts spread over many workgroups.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable

#define TEXT_CODES_ONLY
#include "text_attention_interface.h"
#include "bdpa_interface.h"
#include "text_common.glsl"

layout(constant_id = BDPA_SC_HEAD_DIM) const uint D = 64;
layout(constant_id = BDPA_SC_WG_SIZE) const uint WG = 128;
layout(constant_id = BDPA_SC_Q_POS) const uint Q_POS = 1;
layout(constant_id = BDPA_SC_HEAD_GROUP) const uint HEAD_GROUP = 1;
layout(constant_id = BDPA_SC_TILE_KEYS) const uint TK = 16;
layout(constant_id = BDPA_SC_Q_TYPE) const uint Q_TYPE = DTYPE_F32;
layout(constant_id = BDPA_SC_BASIS_TYPE) const uint BASIS_TYPE = DTYPE_F16;
layout(constant_id = BDPA_SC_O_TYPE) const uint O_TYPE = DTYPE_F32;
layout(constant_id = BDPA_SC_SPLIT) const uint SPLIT = 0;
layout(constant_id = BDPA_SC_ACC_CHUNKS) const uint ACC_CHUNKS = 1;
layout(constant_id = BDPA_SC_PAIRING) const uint PAIRING = BDPA_ROPE_ROTATE_HALF;

layout(local_size_x_id = BDPA_SC_WG_SIZE) in;

layout(std430, binding = BDPA_BIND_Q) readonly buffer QBuf { uvec4 q_words[]; };
// Basis rows read 4 elements at a time: one uvec4 of f32, or one uvec2 of f16/bf16.
layout(std430, binding = BDPA_BIND_BASIS_K) readonly buffer BasisK4 { uvec4 basis_k4[]; };
layout(std430, binding = BDPA_BIND_BASIS_K) readonly buffer BasisK2 { uvec2 basis_k2[]; };
layout(std430, binding = BDPA_BIND_BASIS_V) readonly buffer BasisV4 { uvec4 basis_v4[]; };
layout(std430, binding = BDPA_BIND_BASIS_V) readonly buffer BasisV2 { uvec2 basis_v2[]; };
layout(std430, binding = BDPA_BIND_RESIDUAL_K) readonly buffer ResidualK { uint residual_k[]; };
layout(std430, binding = BDPA_BIND_RESIDUAL_V) readonly buffer ResidualV { uint residual_v[]; };
layout(std430, binding = BDPA_BIND_SCALE_K) readonly buffer ScaleK { float scale_k[]; };
layout(std430, binding = BDPA_BIND_SCALE_V) readonly buffer ScaleV { float scale_v[]; };
layout(std430, binding = BDPA_BIND_INDEX) readonly buffer Index { uint index_words[]; };
layout(std430, binding = BDPA_BIND_ROPE_COS) readonly buffer RopeCos { float rope_cos[]; };
layout(std430, binding = BDPA_BIND_ROPE_SIN) readonly buffer RopeSin { float rope_sin[]; };
layout(std430, binding = BDPA_BIND_O) writeonly buffer OBuf4 { uvec4 o_words4[]; };
layout(std430, binding = BDPA_BIND_O) writeonly buffer OBuf2 { uvec2 o_words2[]; };
layout(std430, binding = BDPA_BIND_KV_LEN) readonly buffer KvLen { uint kv_len_buf[]; };
layout(std430, binding = BDPA_BIND_START_POS) readonly buffer StartPos { uint start_pos_buf[]; };
layout(std430, binding = BDPA_BIND_PARTIAL_O) writeonly buffer PartialO { vec4 partial_o[]; };
layout(std430, binding = BDPA_BIND_PARTIAL_ML) writeonly buffer PartialML { vec2 partial_ml[]; };

const uint ROWS = Q_POS * HEAD_GROUP;
const uint D4 = D / 4;
const float NEG_INF = -1.0 / 0.0;

shared vec4 q_tile[BDPA_Q_VEC4S(ROWS, D)];
shared vec4 k_tile[BDPA_KV_VEC4S(TK, D)];
shared vec4 v_tile[BDPA_KV_VEC4S(TK, D)];
shared float p_tile[ROWS * TK];
shared uint key_basis[TK];
shared uint key_residual[TK];
shared uint key_pos[TK];  // TEXT_INVALID_POS: no query sees the key
shared uint row_pos[ROWS];
shared float row_max[ROWS];
shared float row_sum[ROWS];
shared float row_alpha[ROWS];

uint q_row_elem(uint b, uint qi, uint h) { return b * pc.q_strides[0] + qi * pc.q_strides[1] + h * pc.q_strides[2]; }
uint o_row_elem(uint b, uint qi, uint h) { return b * pc.o_strides[0] + qi * pc.o_strides[1] + h * pc.o_strides[2]; }

#include "text_key_range.glsl"
#include "text_row_write.glsl"

// Elements 4c..4c+3 of basis row `row` (a [Hkv]-expanded row index) in BASIS_TYPE.
vec4 basis4(bool is_v, uint row, uint c) {
  const uint at = row * D4 + c;
  if (BASIS_TYPE == DTYPE_F32) return uintBitsToFloat(is_v ? basis_v4[at] : basis_k4[at]);
  const uvec2 w = is_v ? basis_v2[at] : basis_k2[at];
  if (BASIS_TYPE == DTYPE_F16) return vec4(unpackHalf2x16(w.x), unpackHalf2x16(w.y));
  return vec4(bf16x2_to_vec2(w.x), bf16x2_to_vec2(w.y));
}

// Elements 4c..4c+3 of the key (is_v false) or value row of tile key t, before
// RoPE: basis + scale * residual, the residual's 4 int8 lanes one u32 word.
vec4 rebuilt4(bool is_v, uint t, uint kvh, uint c) {
  const uint rrow = key_residual[t] * pc.num_kv_heads + kvh;
  const uint word = is_v ? residual_v[rrow * D4 + c] : residual_k[rrow * D4 + c];
  const ivec4 r = ivec4(bitfieldExtract(int(word), 0, 8), bitfieldExtract(int(word), 8, 8),
                        bitfieldExtract(int(word), 16, 8), bitfieldExtract(int(word), 24, 8));
  const float s = is_v ? scale_v[rrow] : scale_k[rrow];
  return basis4(is_v, key_basis[t] * pc.num_kv_heads + kvh, c) + s * vec4(r);
}

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint group_q = gl_WorkGroupID.x * Q_POS;
  const uint gqa = pc.num_heads / pc.num_kv_heads;
  const uint groups_per_kv = gqa / HEAD_GROUP;
  const uint kvh = gl_WorkGroupID.y / groups_per_kv;
  const uint head0 = kvh * gqa + (gl_WorkGroupID.y % groups_per_kv) * HEAD_GROUP;
  const uint b = gl_WorkGroupID.z / pc.num_splits;
  const uint split = gl_WorkGroupID.z % pc.num_splits;
  if (b >= pc.batch || gl_WorkGroupID.y >= pc.num_kv_heads * groups_per_kv) return;
  const bool causal = (pc.flags & BDPA_FLAG_CAUSAL) != 0u;

  // The keys of this split: index entries [lo, hi) of sequence b, whole tiles.
  const uint kv_len = min((pc.flags & BDPA_FLAG_KV_LEN_BUFFER) != 0u ? kv_len_buf[b] : pc.kv_len, pc.capacity);
  const uint start_pos = (pc.flags & BDPA_FLAG_START_POS_BUFFER) != 0u ? start_pos_buf[b] : pc.start_pos;
  uvec2 range = uvec2(0u, kv_len);
  if (SPLIT != 0u) range = text_split_range_in_steps(range, split, pc.num_splits, TK);
  const uint lo = range.x, hi = range.y;

  for (uint r = tid; r < ROWS; r += WG) {
    const uint qi = group_q + r / HEAD_GROUP;
    row_pos[r] = qi < pc.seq_len ? text_query_pos(start_pos, qi) : TEXT_INVALID_POS;
    row_max[r] = NEG_INF;
    row_sum[r] = 0.0;
  }
  // Q rows, pre-scaled.
  for (uint e = tid; e < ROWS * D4; e += WG) {
    const uint r = e / D4, c = e % D4;
    const uint qi = group_q + r / HEAD_GROUP;
    vec4 x = vec4(0.0);
    if (qi < pc.seq_len) {
      const uint row = q_row_elem(b, qi, head0 + r % HEAD_GROUP);
      if (Q_TYPE == DTYPE_F32) {
        x = uintBitsToFloat(q_words[row / 4u + c]);
      } else {
        vec4 lo4, hi4;
        unpack_words(Q_TYPE, q_words[row / 8u + c / 2u], lo4, hi4);
        x = (c & 1u) == 0u ? lo4 : hi4;
      }
    }
    q_tile[e] = x * pc.scale;
  }
  vec4 acc[ACC_CHUNKS];
  [[unroll]] for (uint k = 0; k < ACC_CHUNKS; ++k) acc[k] = vec4(0.0);

  for (uint j0 = lo; j0 < hi; j0 += min(TK, hi - j0)) {
    const uint n = min(TK, hi - j0);
    // Step 1: index entries.
    barrier();
    for (uint t = tid; t < TK; t += WG) {
      uint brow = 0u, rrow = 0u, pos = TEXT_INVALID_POS;
      if (t < n) {
        const uint at = (b * pc.capacity + j0 + t) * BDPA_INDEX_WORDS;
        brow = index_words[at + BDPA_INDEX_BASIS];
        rrow = index_words[at + BDPA_INDEX_RESIDUAL];
        const uint p = index_words[at + BDPA_INDEX_POSITION];
        const bool ok = brow < pc.num_basis && rrow < pc.num_residual && (pc.rotary_dim == 0u || p < pc.rope_positions);
        if (ok) pos = p;
      }
      key_basis[t] = brow;
      key_residual[t] = rrow;
      key_pos[t] = pos;
    }
    barrier();
    // Step 2: K and V rebuilt, a vec4 per invocation and step (one residual word each).
    for (uint e = tid; e < TK * D4; e += WG) {
      const uint t = e / D4, c = e % D4;
      const bool ok = key_pos[t] != TEXT_INVALID_POS;
      k_tile[e] = ok ? rebuilt4(false, t, kvh, c) : vec4(0.0);
      v_tile[e] = ok ? rebuilt4(true, t, kvh, c) : vec4(0.0);
    }
    // Then RoPE on the keys in shared memory, one pair per invocation and step,
    // at the key's original position: rotate-half pairs element i with
    // i + rotary_dim/2, interleaved pairs 2i with 2i + 1; elements at or past
    // rotary_dim pass through.
    if (pc.rotary_dim > 0u) {
      barrier();
      const uint half_rd = pc.rotary_dim / 2u;
      for (uint e = tid; e < TK * half_rd; e += WG) {
        const uint t = e / half_rd, i = e % half_rd;
        if (key_pos[t] == TEXT_INVALID_POS) continue;
        const uint a = PAIRING == BDPA_ROPE_INTERLEAVED ? 2u * i : i;
        const uint bi = PAIRING == BDPA_ROPE_INTERLEAVED ? 2u * i + 1u : i + half_rd;
        const uint at = key_pos[t] * half_rd + i;
        const float cs = rope_cos[at], sn = rope_sin[at];
        const float x = k_tile[t * D4 + a / 4u][a % 4u], y = k_tile[t * D4 + bi / 4u][bi % 4u];
        k_tile[t * D4 + a / 4u][a % 4u] = x * cs - y * sn;
        k_tile[t * D4 + bi / 4u][bi % 4u] = y * cs + x * sn;
      }
    }
    barrier();
    // Step 3: scores.
    for (uint e = tid; e < ROWS * TK; e += WG) {
      const uint r = e / TK, t = e % TK;
      float s = NEG_INF;
      if (t < n && text_key_visible(row_pos[r], key_pos[t], pc.window, causal)) {
        float d = 0.0;
        for (uint c = 0; c < D4; ++c) d += dot(q_tile[r * D4 + c], k_tile[t * D4 + c]);
        s = pc.softcap > 0.0 ? pc.softcap * tanh(d / pc.softcap) : d;
      }
      p_tile[e] = s;
    }
    barrier();
    // Step 4: online softmax per row (NaN scores reach the sum, see text_common.glsl).
    for (uint r = tid; r < ROWS; r += WG) {
      const float m_old = row_max[r];
      float m_new = m_old;
      for (uint t = 0; t < TK; ++t) m_new = max(m_new, p_tile[r * TK + t]);
      const float alpha = m_new == NEG_INF ? 1.0 : exp(m_old - m_new);
      float sum = 0.0;
      for (uint t = 0; t < TK; ++t) {
        const float p = text_softmax_weight(p_tile[r * TK + t], m_new);
        p_tile[r * TK + t] = p;
        sum += p;
      }
      row_sum[r] = row_sum[r] * alpha + sum;
      row_max[r] = m_new;
      row_alpha[r] = alpha;
    }
    barrier();
    // Step 5: rescale and add P.V.
    [[unroll]] for (uint k = 0; k < ACC_CHUNKS; ++k) {
      const uint e = tid + k * WG;
      if (e >= ROWS * D4) continue;
      const uint r = e / D4, c = e % D4;
      vec4 a = acc[k] * row_alpha[r];
      for (uint t = 0; t < TK; ++t) a += p_tile[r * TK + t] * v_tile[t * D4 + c];
      acc[k] = a;
    }
  }
  barrier();

  [[unroll]] for (uint k = 0; k < ACC_CHUNKS; ++k) {
    const uint e = tid + k * WG;
    if (e >= ROWS * D4) continue;
    const uint r = e / D4, c = e % D4;
    const uint qi = group_q + r / HEAD_GROUP;
    if (qi < pc.seq_len) text_write_row(b, split, qi, head0 + r % HEAD_GROUP, c, acc[k], row_max[r], row_sum[r]);
  }
}

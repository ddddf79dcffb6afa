#version 450
// Bidirectional vision-tower attention, one source for every vision variant
// (src/planner/vision_variants.cpp picks the specialization constants):
//   KIND reference: one invocation per (patch, head) walks every key straight
//     from memory with an online softmax (no shared memory; any head dim);
//   KIND flash: a workgroup owns QUERIES patches of one head and walks the keys
//     in tiles of TILE staged in shared memory (f32, or f16 pairs packed with
//     packHalf2x16 into uint arrays: half the bytes and no f16-arithmetic
//     feature), online softmax per query, f32 accumulation.
// USE_SUBGROUP (a separate module) reduces each query's tile with subgroupMax/Add.
// Q, K, V and the output are read and written as uvec4 words, so f16 needs no
// 16-bit storage feature; LAYOUT selects PHD [P, H, D] or HPD [H, P, D] rows.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable
#ifdef USE_SUBGROUP
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif

#define VIS_ATTENTION_PUSH 1
#include "vision_interface.h"
#include "vision_tile_arrays.h"
#include "text_common.glsl"

layout(constant_id = VIS_SC_HEAD_DIM) const uint D = 64;
layout(constant_id = VIS_SC_WG_SIZE) const uint WG = 64;
layout(constant_id = VIS_SC_QUERIES) const uint QN = 1;
layout(constant_id = VIS_SC_TILE) const uint TK = 32;
layout(constant_id = VIS_SC_IN_TYPE) const uint IN_TYPE = DTYPE_F32;
layout(constant_id = VIS_SC_OUT_TYPE) const uint OUT_TYPE = DTYPE_F32;
layout(constant_id = VIS_SC_LAYOUT) const uint LAYOUT = VIS_LAYOUT_PHD;
layout(constant_id = VIS_SC_KIND) const uint KIND = VIS_KIND_FLASH;
layout(constant_id = VIS_SC_F16_SHARED) const uint F16_SHARED = 0;
layout(constant_id = VIS_SC_ACC_CHUNKS) const uint ACC_CHUNKS = 1;

layout(local_size_x_id = VIS_SC_WG_SIZE) in;

layout(std430, binding = VIS_BIND_Q) readonly buffer QBuf { uvec4 q_words[]; };
layout(std430, binding = VIS_BIND_K) readonly buffer KBuf { uvec4 k_words[]; };
layout(std430, binding = VIS_BIND_V) readonly buffer VBuf { uvec4 v_words[]; };
layout(std430, binding = VIS_BIND_O) writeonly buffer OBuf4 { uvec4 o_words4[]; };
layout(std430, binding = VIS_BIND_O) writeonly buffer OBuf2 { uvec2 o_words2[]; };

const uint D4 = D / 4;
const uint K_STRIDE = D4 + 1;  // padding: consecutive keys start in different banks
const uint WORDS_PER_ROW = D / (IN_TYPE == DTYPE_F32 ? 4 : 8);
const float NEG_INF = -1.0 / 0.0;
// The tile arrays of the unused precision shrink to one element (sizes are
// specialization-constant expressions, so each pipeline declares only its own).
const uint F32_TILE = F16_SHARED != 0u ? 1u : TK;
const uint F16_TILE = F16_SHARED != 0u ? TK : 1u;

shared vec4 q_tile[VIS_TILE_Q_VEC4S(QN, D)];
shared vec4 k_tile[VIS_TILE_K_WORDS(F32_TILE, D)];
shared vec4 v_tile[VIS_TILE_V_WORDS(F32_TILE, D)];
shared uvec2 k_tile_h[VIS_TILE_K_WORDS(F16_TILE, D)];  // 4 halves per uvec2
shared uvec2 v_tile_h[VIS_TILE_V_WORDS(F16_TILE, D)];
shared float p_tile[VIS_TILE_P_FLOATS(QN, TK)];
shared float row_max[QN];
shared float row_sum[QN];
shared float row_alpha[QN];

// First uvec4 word of row (patch, head) in the tensor layout.
uint row_word(uint pt, uint head) {
  uint row = LAYOUT == VIS_LAYOUT_PHD ? pt * pc.heads + head : head * pc.patches + pt;
  return row * WORDS_PER_ROW;
}
uint out_chunk(uint pt, uint head, uint c) {
  uint row = LAYOUT == VIS_LAYOUT_PHD ? pt * pc.heads + head : head * pc.patches + pt;
  return row * D4 + c;
}

void store_out(uint chunk, vec4 o) {
  uvec4 w = pack_vec4(OUT_TYPE, o);
  if (OUT_TYPE == DTYPE_F32) o_words4[chunk] = w;
  else o_words2[chunk] = w.xy;
}

// Element chunk c (4 values) of a row starting at word `base`.
vec4 load_chunk(uint which, uint base, uint c) {
  vec4 lo, hi;
  uint word = IN_TYPE == DTYPE_F32 ? c : c / 2u;
  uvec4 w = which == 0u ? q_words[base + word] : (which == 1u ? k_words[base + word] : v_words[base + word]);
  unpack_words(IN_TYPE, w, lo, hi);
  return (IN_TYPE == DTYPE_F32 || (c & 1u) == 0u) ? lo : hi;
}

vec4 k_at(uint jj, uint c) {
  if (F16_SHARED != 0u) {
    uvec2 w = k_tile_h[jj * K_STRIDE + c];
    return vec4(unpackHalf2x16(w.x), unpackHalf2x16(w.y));
  }
  return k_tile[jj * K_STRIDE + c];
}
vec4 v_at(uint jj, uint c) {
  if (F16_SHARED != 0u) {
    uvec2 w = v_tile_h[jj * D4 + c];
    return vec4(unpackHalf2x16(w.x), unpackHalf2x16(w.y));
  }
  return v_tile[jj * D4 + c];
}

// Stores 4 (f32 storage) or 8 (f16 storage) elements of a staged K or V row.
void stage(bool is_k, uint jj, uint w, uvec4 word) {
  const uint stride = is_k ? K_STRIDE : D4;
  if (F16_SHARED != 0u) {
    // f16 input is copied as it is; f32 input is rounded to f16 pairs.
    uvec2 a, b;
    if (IN_TYPE == DTYPE_F16) {
      a = word.xy;
      b = word.zw;
    } else {
      vec4 v = uintBitsToFloat(word);
      a = uvec2(packHalf2x16(v.xy), packHalf2x16(v.zw));
    }
    uint c = IN_TYPE == DTYPE_F16 ? 2u * w : w;
    if (is_k) k_tile_h[jj * stride + c] = a; else v_tile_h[jj * stride + c] = a;
    if (IN_TYPE == DTYPE_F16) {
      if (is_k) k_tile_h[jj * stride + c + 1u] = b; else v_tile_h[jj * stride + c + 1u] = b;
    }
  } else {
    vec4 lo, hi;
    unpack_words(IN_TYPE, word, lo, hi);
    uint c = IN_TYPE == DTYPE_F16 ? 2u * w : w;
    if (is_k) k_tile[jj * stride + c] = lo; else v_tile[jj * stride + c] = lo;
    if (IN_TYPE == DTYPE_F16) {
      if (is_k) k_tile[jj * stride + c + 1u] = hi; else v_tile[jj * stride + c + 1u] = hi;
    }
  }
}

// KIND reference: the plain definition, one query row per invocation.
void reference_attention() {
  const uint id = gl_GlobalInvocationID.x;
  if (id >= pc.patches * pc.heads) return;
  const uint p = id / pc.heads, h = id % pc.heads;
  vec4 qv[D4];
  vec4 acc[D4];
  const uint qb = row_word(p, h);
  [[unroll]] for (uint c = 0; c < D4; ++c) {
    qv[c] = load_chunk(0u, qb, c) * pc.scale;
    acc[c] = vec4(0.0);
  }
  float m = NEG_INF, l = 0.0;
  for (uint t = 0; t < pc.patches; ++t) {
    const uint kb = row_word(t, h);
    float s = 0.0;
    [[unroll]] for (uint c = 0; c < D4; ++c) s += dot(qv[c], load_chunk(1u, kb, c));
    const float m_new = max(m, s);
    const float alpha = exp(m - m_new);  // m = -inf at the first key: alpha = 0
    const float w = exp(s - m_new);
    l = l * alpha + w;
    [[unroll]] for (uint c = 0; c < D4; ++c) acc[c] = acc[c] * alpha + w * load_chunk(2u, kb, c);
    m = m_new;
  }
  [[unroll]] for (uint c = 0; c < D4; ++c) store_out(out_chunk(p, h, c), acc[c] / l);
}

void flash_attention() {
  const uint tid = gl_LocalInvocationID.x;
  const uint q0 = gl_WorkGroupID.x * QN;
  const uint h = gl_WorkGroupID.y;

  // The scale is folded into Q once; queries past the last patch are zero rows
  // (computed, never written).
  for (uint i = tid; i < QN * D4; i += WG) {
    uint r = i / D4, c = i % D4;
    q_tile[i] = q0 + r < pc.patches ? load_chunk(0u, row_word(q0 + r, h), c) * pc.scale : vec4(0.0);
  }
  for (uint r = tid; r < QN; r += WG) {
    row_max[r] = NEG_INF;
    row_sum[r] = 0.0;
  }
  vec4 acc[ACC_CHUNKS];
  [[unroll]] for (uint a = 0; a < ACC_CHUNKS; ++a) acc[a] = vec4(0.0);

  for (uint t0 = 0; t0 < pc.patches; t0 += TK) {
    barrier();  // the previous tile is no longer read
    // Step 1: stage K and V rows; rows past the last patch become zeros.
    for (uint i = tid; i < TK * WORDS_PER_ROW; i += WG) {
      uint jj = i / WORDS_PER_ROW, w = i % WORDS_PER_ROW;
      uint t = t0 + jj;
      uvec4 kw = uvec4(0u), vw = uvec4(0u);
      if (t < pc.patches) {
        uint base = row_word(t, h) + w;
        kw = k_words[base];
        vw = v_words[base];
      }
      stage(true, jj, w, kw);
      stage(false, jj, w, vw);
    }
    barrier();

    // Step 2: scores of every (query, key) pair of the tile.
    for (uint i = tid; i < QN * TK; i += WG) {
      uint r = i / TK, jj = i % TK;
      float s = NEG_INF;
      if (t0 + jj < pc.patches) {
        s = 0.0;
        [[unroll]] for (uint c = 0; c < D4; ++c) s += dot(q_tile[r * D4 + c], k_at(jj, c));
      }
      p_tile[i] = s;
    }
    barrier();

    // Step 3: online softmax per query (running max, running sum, rescale factor).
#ifdef USE_SUBGROUP
    // One subgroup per query at a time, lanes across the tile's keys; works for
    // any subgroup size dividing WG (full subgroups are required by the pipeline).
    const uint sg_count = WG / gl_SubgroupSize;
    for (uint r = gl_SubgroupID; r < QN; r += sg_count) {
      float tile_max = NEG_INF;
      for (uint jj = gl_SubgroupInvocationID; jj < TK; jj += gl_SubgroupSize) tile_max = max(tile_max, p_tile[r * TK + jj]);
      const float m_new = max(row_max[r], subgroupMax(tile_max));
      float part = 0.0;
      for (uint jj = gl_SubgroupInvocationID; jj < TK; jj += gl_SubgroupSize) {
        float p = exp(p_tile[r * TK + jj] - m_new);
        p_tile[r * TK + jj] = p;
        part += p;
      }
      const float total = subgroupAdd(part);
      if (subgroupElect()) {
        const float alpha = exp(row_max[r] - m_new);
        row_sum[r] = row_sum[r] * alpha + total;
        row_max[r] = m_new;
        row_alpha[r] = alpha;
      }
    }
#else
    for (uint r = tid; r < QN; r += WG) {
      float m_new = row_max[r];
      for (uint jj = 0; jj < TK; ++jj) m_new = max(m_new, p_tile[r * TK + jj]);
      float total = 0.0;
      for (uint jj = 0; jj < TK; ++jj) {
        float p = exp(p_tile[r * TK + jj] - m_new);
        p_tile[r * TK + jj] = p;
        total += p;
      }
      const float alpha = exp(row_max[r] - m_new);
      row_sum[r] = row_sum[r] * alpha + total;
      row_max[r] = m_new;
      row_alpha[r] = alpha;
    }
#endif
    barrier();

    // Step 4: rescale and add P.V for this invocation's output slice.
    [[unroll]] for (uint a = 0; a < ACC_CHUNKS; ++a) {
      uint e = tid + a * WG;
      if (e < QN * D4) {
        uint r = e / D4, c = e % D4;
        vec4 o = acc[a] * row_alpha[r];
        for (uint jj = 0; jj < TK; ++jj) o += p_tile[r * TK + jj] * v_at(jj, c);
        acc[a] = o;
      }
    }
  }

  // Every tile has a real key first (t0 < patches), so each row's max is finite
  // and its sum >= 1 after the first tile.
  [[unroll]] for (uint a = 0; a < ACC_CHUNKS; ++a) {
    uint e = tid + a * WG;
    if (e >= QN * D4) continue;
    uint r = e / D4, c = e % D4;
    if (q0 + r >= pc.patches) continue;
    store_out(out_chunk(q0 + r, h, c), acc[a] / row_sum[r]);
  }
}

void main() {
  if (KIND == VIS_KIND_REFERENCE) reference_attention();
  else flash_attention();
}

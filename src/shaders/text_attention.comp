#version 450
// Text-decoder attention, one source for every text variant (the variant table
// in src/planner picks the specialization constants).
//
// A workgroup owns ROWS = Q_POS x HEAD_GROUP query rows that share one KV head
// (GQA heads together, so K/V are read once for all of them), and one KV split.
// It walks its key range in tiles of TILE_KEYS keys staged in shared memory:
//   step 1: scores for every (row, key) pair, masked and soft-capped;
//   step 2: online softmax per row (running max m, running sum l);
//   step 3: each invocation rescales its slice of the output rows and adds P·V.
// With SPLIT the un-normalised output and (m, l) go to scratch for
// text_split_reduce.comp; otherwise the normalised output is written.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable
#ifdef KV_BY_ADDRESS
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#endif
#ifdef USE_SUBGROUP
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif

#include "text_attention_interface.h"
#include "text_tile_arrays.h"
#include "text_common.glsl"

layout(constant_id = TEXT_SC_HEAD_DIM) const uint D = 64;
layout(constant_id = TEXT_SC_WG_SIZE) const uint WG = 128;
layout(constant_id = TEXT_SC_Q_POS) const uint Q_POS = 1;
layout(constant_id = TEXT_SC_HEAD_GROUP) const uint HEAD_GROUP = 1;
layout(constant_id = TEXT_SC_TILE_KEYS) const uint TK = 16;
layout(constant_id = TEXT_SC_Q_TYPE) const uint Q_TYPE = DTYPE_F32;
layout(constant_id = TEXT_SC_KV_TYPE) const uint KV_TYPE = DTYPE_F32;
layout(constant_id = TEXT_SC_O_TYPE) const uint O_TYPE = DTYPE_F32;
layout(constant_id = TEXT_SC_LAYOUT) const uint LAYOUT = TEXT_LAYOUT_CONTIGUOUS;
layout(constant_id = TEXT_SC_SPLIT) const uint SPLIT = 0;
layout(constant_id = TEXT_SC_ACC_CHUNKS) const uint ACC_CHUNKS = 1;
layout(constant_id = TEXT_SC_KV_GROUP) const uint KV_GROUP = 0;

layout(local_size_x_id = TEXT_SC_WG_SIZE) in;

layout(std430, binding = TEXT_BIND_Q) readonly buffer QBuf { uvec4 q_words[]; };
layout(std430, binding = TEXT_BIND_O) writeonly buffer OBuf4 { uvec4 o_words4[]; };
layout(std430, binding = TEXT_BIND_O) writeonly buffer OBuf2 { uvec2 o_words2[]; };
layout(std430, binding = TEXT_BIND_PAGE_TABLE) readonly buffer PageTable { uint page_table[]; };
layout(std430, binding = TEXT_BIND_KV_LEN) readonly buffer KvLen { uint kv_len_buf[]; };
layout(std430, binding = TEXT_BIND_START_POS) readonly buffer StartPos { uint start_pos_buf[]; };
layout(std430, binding = TEXT_BIND_KV_START) readonly buffer KvStart { uint kv_start_buf[]; };
layout(std430, binding = TEXT_BIND_PARTIAL_O) writeonly buffer PartialO { vec4 partial_o[]; };
layout(std430, binding = TEXT_BIND_PARTIAL_ML) writeonly buffer PartialML { vec2 partial_ml[]; };
#include "kv_quant.glsl"

const uint ROWS = Q_POS * HEAD_GROUP;
const uint D4 = D / 4;
const uint K_STRIDE = D4 + 1;  // padding: consecutive keys start in different banks
const uint KV_WORDS_PER_ROW = D / (KV_TYPE == DTYPE_F32 ? 4 : 8);
const uint Q_WORDS_PER_ROW = D / (Q_TYPE == DTYPE_F32 ? 4 : 8);
const float NEG_INF = -1.0 / 0.0;

shared vec4 q_tile[TEXT_TILE_Q_VEC4S(ROWS, D)];
shared vec4 k_tile[TEXT_TILE_K_VEC4S(TK, D)];
shared vec4 v_tile[TEXT_TILE_V_VEC4S(TK, D)];
shared float p_tile[TEXT_TILE_P_FLOATS(ROWS, TK)];
shared uint key_pos[TK];
shared uint row_pos[ROWS];  // absolute query position, TEXT_INVALID_POS past seq_len
shared float row_max[ROWS];
shared float row_sum[ROWS];
shared float row_alpha[ROWS];

#include "text_key_range.glsl"
#include "text_kv_addressing.glsl"
#include "text_row_write.glsl"

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint group_q = gl_WorkGroupID.x * Q_POS;
  const uint groups_per_kv = (pc.num_heads / pc.num_kv_heads) / HEAD_GROUP;
  const uint kvh = gl_WorkGroupID.y / groups_per_kv;
  const uint head0 = kvh * (pc.num_heads / pc.num_kv_heads) + (gl_WorkGroupID.y % groups_per_kv) * HEAD_GROUP;
  const uint b = gl_WorkGroupID.z / pc.num_splits;
  const uint split = gl_WorkGroupID.z % pc.num_splits;
  // Indirect dispatches may ask for more workgroups than the call has.
  if (b >= pc.batch || gl_WorkGroupID.y >= pc.num_kv_heads * groups_per_kv) return;

  const uint kv_len = (pc.flags & TEXT_FLAG_KV_LEN_BUFFER) != 0u ? kv_len_buf[b] : pc.kv_len;
  const uint start_pos = (pc.flags & TEXT_FLAG_START_POS_BUFFER) != 0u ? start_pos_buf[b] : pc.start_pos;
  const uint kv_start = (pc.flags & TEXT_FLAG_KV_START_BUFFER) != 0u ? kv_start_buf[b] : pc.kv_start;
  const bool causal = (pc.flags & TEXT_FLAG_CAUSAL) != 0u;
  kv_tier_begin(kv_len, kv_start);

  // Keys this workgroup can see at all (causal ends early, a window starts
  // late), clamped to the cache: values read from GPU buffers were not
  // validated on the host.
  const uint last_q = min(group_q + Q_POS, pc.seq_len) - 1u;
  uvec2 range = text_key_range(kv_len, kv_start, text_query_pos(start_pos, group_q), text_query_pos(start_pos, last_q),
                               pc.window, causal, kv_slot_layout(), pc.capacity, pc.max_pages);
  if (SPLIT != 0u) range = text_split_range(range, split, pc.num_splits);
  const uint j_lo = range.x, j_hi = range.y;

  for (uint r = tid; r < ROWS; r += WG) {
    uint qi = group_q + r / HEAD_GROUP;
    row_pos[r] = qi < pc.seq_len ? text_query_pos(start_pos, qi) : TEXT_INVALID_POS;
    row_max[r] = NEG_INF;
    row_sum[r] = 0.0;
  }
  for (uint i = tid; i < ROWS * Q_WORDS_PER_ROW; i += WG) {
    uint r = i / Q_WORDS_PER_ROW, w = i % Q_WORDS_PER_ROW;
    uint qi = group_q + r / HEAD_GROUP;
    uint h = head0 + r % HEAD_GROUP;
    vec4 lo = vec4(0.0), hi = vec4(0.0);
    if (qi < pc.seq_len) unpack_words(Q_TYPE, q_words[q_row_elem(b, qi, h) / elems_per_word4(Q_TYPE) + w], lo, hi);
    if (Q_TYPE == DTYPE_F32) {
      q_tile[r * D4 + w] = lo;
    } else {
      q_tile[r * D4 + 2 * w] = lo;
      q_tile[r * D4 + 2 * w + 1] = hi;
    }
  }

  vec4 acc[ACC_CHUNKS];
  [[unroll]] for (uint a = 0; a < ACC_CHUNKS; ++a) acc[a] = vec4(0.0);

  // Tile starts step by TK while keys remain (t0 + TK could pass 2^32).
  for (uint t0 = j_lo; t0 < j_hi; t0 += min(TK, j_hi - t0)) {
    barrier();  // the previous tile is no longer read
    // Stage K/V rows of this tile; keys past the range (or behind a bad page) become zero rows.
    for (uint jj = tid; jj < TK; jj += WG) {
      uint pos = jj < j_hi - t0 ? kv_start + t0 + jj : TEXT_INVALID_POS;
      uint outer, inner;
      key_pos[jj] = (pos != TEXT_INVALID_POS && kv_coords(b, pos, outer, inner)) ? pos : TEXT_INVALID_POS;
    }
    for (uint i = tid; i < TK * KV_WORDS_PER_ROW; i += WG) {
      uint jj = i / KV_WORDS_PER_ROW, w = i % KV_WORDS_PER_ROW;
      vec4 klo = vec4(0.0), khi = vec4(0.0), vlo = vec4(0.0), vhi = vec4(0.0);
      KvRow row = kv_row_none();
      if (jj < j_hi - t0 && kv_row(b, kv_start + t0 + jj, kvh, row)) {
        if (kv_quantized() && !row.hot) {  // quantized cold rows: units of 8 codes and their scale
          kvq_unpack8(kvq_load8(true, row.k + 8u * w), klo, khi);
          kvq_unpack8(kvq_load8(false, row.v + 8u * w), vlo, vhi);
        } else {
          unpack_words(kv_row_type(row.hot), kv_word4(true, row, w), klo, khi);
          unpack_words(kv_row_type(row.hot), kv_word4(false, row, w), vlo, vhi);
        }
      }
      if (KV_TYPE == DTYPE_F32) {
        k_tile[jj * K_STRIDE + w] = klo;
        v_tile[jj * D4 + w] = vlo;
      } else {
        k_tile[jj * K_STRIDE + 2 * w] = klo;
        k_tile[jj * K_STRIDE + 2 * w + 1] = khi;
        v_tile[jj * D4 + 2 * w] = vlo;
        v_tile[jj * D4 + 2 * w + 1] = vhi;
      }
    }
    barrier();

    // Step 1: scores.
    for (uint i = tid; i < ROWS * TK; i += WG) {
      uint r = i / TK, jj = i % TK;
      float s = NEG_INF;
      if (text_key_visible(row_pos[r], key_pos[jj], pc.window, causal)) {
        float dotv = 0.0;
        [[unroll]] for (uint c = 0; c < D4; ++c) dotv += dot(q_tile[r * D4 + c], k_tile[jj * K_STRIDE + c]);
        s = dotv * pc.scale;
        if (pc.softcap > 0.0) s = pc.softcap * tanh(s / pc.softcap);
      }
      p_tile[i] = s;
    }
    barrier();

    // Step 2: online softmax per row.
#ifdef USE_SUBGROUP
    // One subgroup per row at a time, lanes across the tile's keys.
    const uint sg_count = WG / gl_SubgroupSize;
    for (uint r = gl_SubgroupID; r < ROWS; r += sg_count) {
      float tile_max = NEG_INF;
      for (uint jj = gl_SubgroupInvocationID; jj < TK; jj += gl_SubgroupSize) tile_max = max(tile_max, p_tile[r * TK + jj]);
      float m_new = max(row_max[r], subgroupMax(tile_max));
      float part = 0.0;
      for (uint jj = gl_SubgroupInvocationID; jj < TK; jj += gl_SubgroupSize) {
        float p = text_softmax_weight(p_tile[r * TK + jj], m_new);
        p_tile[r * TK + jj] = p;
        part += p;
      }
      float total = subgroupAdd(part);
      if (subgroupElect()) {
        float alpha = m_new == NEG_INF ? 1.0 : exp(row_max[r] - m_new);
        row_sum[r] = row_sum[r] * alpha + total;
        row_max[r] = m_new;
        row_alpha[r] = alpha;
      }
    }
#else
    for (uint r = tid; r < ROWS; r += WG) {
      float m_new = row_max[r];
      for (uint jj = 0; jj < TK; ++jj) m_new = max(m_new, p_tile[r * TK + jj]);
      float total = 0.0;
      for (uint jj = 0; jj < TK; ++jj) {
        float p = text_softmax_weight(p_tile[r * TK + jj], m_new);
        p_tile[r * TK + jj] = p;
        total += p;
      }
      float alpha = m_new == NEG_INF ? 1.0 : exp(row_max[r] - m_new);
      row_sum[r] = row_sum[r] * alpha + total;
      row_max[r] = m_new;
      row_alpha[r] = alpha;
    }
#endif
    barrier();

    // Step 3: rescale and accumulate P·V for this invocation's output slice.
    [[unroll]] for (uint a = 0; a < ACC_CHUNKS; ++a) {
      uint e = tid + a * WG;
      if (e < ROWS * D4) {
        uint r = e / D4, c = e % D4;
        vec4 o = acc[a] * row_alpha[r];
        for (uint jj = 0; jj < TK; ++jj) o += p_tile[r * TK + jj] * v_tile[jj * D4 + c];
        acc[a] = o;
      }
    }
  }
  barrier();

  [[unroll]] for (uint a = 0; a < ACC_CHUNKS; ++a) {
    uint e = tid + a * WG;
    if (e >= ROWS * D4) continue;
    uint r = e / D4, c = e % D4;
    uint qi = group_q + r / HEAD_GROUP;
    if (qi >= pc.seq_len) continue;
    uint h = head0 + r % HEAD_GROUP;
    text_write_row(b, split, qi, h, c, acc[a], row_max[r], row_sum[r]);
  }
}

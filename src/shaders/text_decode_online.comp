#version 450
// Decode attention that streams K/V straight from memory into registers: no
// shared-memory tiles, one online softmax per subgroup over its keys.
//
// A workgroup owns HEAD_GROUP query heads that share one KV head (one query
// position) and one KV split. Each subgroup takes blocks of TILE_KEYS keys in
// turn; its lanes split the head dimension, so a K or V row is read by one
// subgroup in one coalesced sweep. Per block:
//   step 1: every lane loads its slice of TILE_KEYS K and V rows (independent
//           loads in flight together);
//   step 2: partial dot products, summed across lanes (subgroupAdd) -> scores;
//   step 3: online softmax update (running max m, running sum l, rescaled acc).
// At the end the subgroups' (m, l, acc) are merged through shared memory, and
// the result is written (or, with SPLIT, left for text_split_reduce.comp).
//
// Built without USE_SUBGROUP (decode_chunked, for devices without subgroup
// arithmetic) the whole workgroup is one group of lanes across the head
// dimension and the lane sums go through a shared-memory tree instead.
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
#include "text_common.glsl"

layout(constant_id = TEXT_SC_HEAD_DIM) const uint D = 128;
layout(constant_id = TEXT_SC_WG_SIZE) const uint WG = 128;
layout(constant_id = TEXT_SC_HEAD_GROUP) const uint HEAD_GROUP = 1;
layout(constant_id = TEXT_SC_TILE_KEYS) const uint KB = 4;
layout(constant_id = TEXT_SC_Q_TYPE) const uint Q_TYPE = DTYPE_F32;
layout(constant_id = TEXT_SC_KV_TYPE) const uint KV_TYPE = DTYPE_F32;
layout(constant_id = TEXT_SC_O_TYPE) const uint O_TYPE = DTYPE_F32;
layout(constant_id = TEXT_SC_LAYOUT) const uint LAYOUT = TEXT_LAYOUT_CONTIGUOUS;
layout(constant_id = TEXT_SC_SPLIT) const uint SPLIT = 0;
layout(constant_id = TEXT_SC_KV_GROUP) const uint KV_GROUP = 0;
#ifdef USE_SUBGROUP
layout(constant_id = TEXT_SC_SUBGROUP_SIZE) const uint SG = 32;
#else
const uint SG = WG;  // one group of lanes: the workgroup
#endif

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

const uint D4 = D / 4;
const uint CPL = (D4 + SG - 1) / SG;  // vec4 slices per lane
const uint NSG = WG / SG;             // subgroups per workgroup
const float NEG_INF = -1.0 / 0.0;

#ifndef USE_SUBGROUP
shared float lane_part[TEXT_ONLINE_LANE_PART_FLOATS(HEAD_GROUP, KB, WG)];
#endif
shared float merge_m[NSG * HEAD_GROUP];
shared float merge_l[NSG * HEAD_GROUP];
shared vec4 merge_acc[TEXT_FLASH_MERGE_VEC4S(NSG, HEAD_GROUP, D)];

#include "text_key_range.glsl"
#include "text_kv_addressing.glsl"
#include "text_row_write.glsl"

// vec4 slice `c` (4 elements) of a K (is_k) or V row.
vec4 load_slice(bool is_k, KvRow row, uint c) {
  const uint type = kv_row_type(row.hot);
  if (type == DTYPE_INT8 || type == DTYPE_INT4) return kvq_load4(is_k, (is_k ? row.k : row.v) + 4u * c);
  if (type == DTYPE_F32) return uintBitsToFloat(kv_word4(is_k, row, c));
  uvec2 w = kv_word2(is_k, row, c);
  if (type == DTYPE_F16) return vec4(unpackHalf2x16(w.x), unpackHalf2x16(w.y));
  return vec4(bf16x2_to_vec2(w.x), bf16x2_to_vec2(w.y));
}

void main() {
  const uint tid = gl_LocalInvocationID.x;
#ifdef USE_SUBGROUP
  const uint lane = gl_SubgroupInvocationID;
  const uint sg = gl_SubgroupID;
#else
  const uint lane = tid;
  const uint sg = 0;
#endif
  const uint qi = gl_WorkGroupID.x;
  const uint groups_per_kv = (pc.num_heads / pc.num_kv_heads) / HEAD_GROUP;
  const uint kvh = gl_WorkGroupID.y / groups_per_kv;
  const uint head0 = kvh * (pc.num_heads / pc.num_kv_heads) + (gl_WorkGroupID.y % groups_per_kv) * HEAD_GROUP;
  const uint b = gl_WorkGroupID.z / pc.num_splits;
  const uint split = gl_WorkGroupID.z % pc.num_splits;
  if (b >= pc.batch || qi >= pc.seq_len || gl_WorkGroupID.y >= pc.num_kv_heads * groups_per_kv) return;

  const uint kv_len = (pc.flags & TEXT_FLAG_KV_LEN_BUFFER) != 0u ? kv_len_buf[b] : pc.kv_len;
  const uint start_pos = (pc.flags & TEXT_FLAG_START_POS_BUFFER) != 0u ? start_pos_buf[b] : pc.start_pos;
  const uint kv_start = (pc.flags & TEXT_FLAG_KV_START_BUFFER) != 0u ? kv_start_buf[b] : pc.kv_start;
  const uint qpos = text_query_pos(start_pos, qi);
  kv_tier_begin(kv_len, kv_start);
  uvec2 range = text_key_range(kv_len, kv_start, qpos, qpos, pc.window, (pc.flags & TEXT_FLAG_CAUSAL) != 0u, kv_slot_layout(),
                               pc.capacity, pc.max_pages);
  if (SPLIT != 0u) range = text_split_range(range, split, pc.num_splits);
  const uint j_lo = range.x, j_hi = range.y;

  // Q rows in registers, pre-scaled.
  vec4 q[HEAD_GROUP][CPL];
  [[unroll]] for (uint g = 0; g < HEAD_GROUP; ++g) {
    uint row = q_row_elem(b, qi, head0 + g);
    [[unroll]] for (uint c = 0; c < CPL; ++c) {
      uint ci = lane + c * SG;
      vec4 v = vec4(0.0);
      if (ci < D4) {
        uint e = row + 4u * ci;
        if (Q_TYPE == DTYPE_F32) {
          v = uintBitsToFloat(q_words[e / 4u]);
        } else {
          vec4 lo, hi;
          unpack_words(Q_TYPE, q_words[e / 8u], lo, hi);
          v = (e % 8u) == 0u ? lo : hi;
        }
      }
      q[g][c] = v * pc.scale;
    }
  }

  float m[HEAD_GROUP];
  float l[HEAD_GROUP];
  vec4 acc[HEAD_GROUP][CPL];
  [[unroll]] for (uint g = 0; g < HEAD_GROUP; ++g) {
    m[g] = NEG_INF;
    l[g] = 0.0;
    [[unroll]] for (uint c = 0; c < CPL; ++c) acc[g][c] = vec4(0.0);
  }

  // Block starts step by NSG * KB while keys remain (j0 + NSG * KB could pass 2^32).
  for (uint j0 = j_lo + min(sg * KB, j_hi - j_lo); j0 < j_hi; j0 += min(NSG * KB, j_hi - j0)) {
    // Step 1: loads for the whole block.
    vec4 kr[KB][CPL];
    vec4 vr[KB][CPL];
    bool ok[KB];
    [[unroll]] for (uint kk = 0; kk < KB; ++kk) {
      KvRow row = kv_row_none();
      ok[kk] = kk < j_hi - j0 && kv_row(b, kv_start + j0 + kk, kvh, row);
      [[unroll]] for (uint c = 0; c < CPL; ++c) {
        uint ci = lane + c * SG;
        bool in_row = ok[kk] && ci < D4;
        kr[kk][c] = in_row ? load_slice(true, row, ci) : vec4(0.0);
        vr[kk][c] = in_row ? load_slice(false, row, ci) : vec4(0.0);
      }
    }
    // Step 2: partial dot products, then their sums across the lanes.
    float part[HEAD_GROUP][KB];
    [[unroll]] for (uint g = 0; g < HEAD_GROUP; ++g)
      [[unroll]] for (uint kk = 0; kk < KB; ++kk) {
        float d = 0.0;
        [[unroll]] for (uint c = 0; c < CPL; ++c) d += dot(q[g][c], kr[kk][c]);
        part[g][kk] = d;
      }
#ifdef USE_SUBGROUP
    [[unroll]] for (uint g = 0; g < HEAD_GROUP; ++g)
      [[unroll]] for (uint kk = 0; kk < KB; ++kk) part[g][kk] = subgroupAdd(part[g][kk]);
#else
    // Every lane reaches these barriers: the whole workgroup walks one key sequence.
    barrier();
    [[unroll]] for (uint g = 0; g < HEAD_GROUP; ++g)
      [[unroll]] for (uint kk = 0; kk < KB; ++kk) lane_part[(g * KB + kk) * WG + tid] = part[g][kk];
    barrier();
    for (uint stride = WG / 2; stride > 0; stride /= 2) {
      if (tid < stride)
        for (uint i = 0; i < HEAD_GROUP * KB; ++i) lane_part[i * WG + tid] += lane_part[i * WG + tid + stride];
      barrier();
    }
    [[unroll]] for (uint g = 0; g < HEAD_GROUP; ++g)
      [[unroll]] for (uint kk = 0; kk < KB; ++kk) part[g][kk] = lane_part[(g * KB + kk) * WG];
#endif
    // Step 3: online softmax per query head.
    [[unroll]] for (uint g = 0; g < HEAD_GROUP; ++g) {
      float s[KB];
      float m_new = m[g];
      [[unroll]] for (uint kk = 0; kk < KB; ++kk) {
        float sc = part[g][kk];
        if (pc.softcap > 0.0) sc = pc.softcap * tanh(sc / pc.softcap);
        s[kk] = ok[kk] ? sc : NEG_INF;
        m_new = max(m_new, s[kk]);
      }
      float alpha = m_new == NEG_INF ? 1.0 : exp(m[g] - m_new);
      float sum = 0.0;
      [[unroll]] for (uint c = 0; c < CPL; ++c) acc[g][c] *= alpha;
      [[unroll]] for (uint kk = 0; kk < KB; ++kk) {
        float p = text_softmax_weight(s[kk], m_new);
        sum += p;
        [[unroll]] for (uint c = 0; c < CPL; ++c) acc[g][c] += p * vr[kk][c];
      }
      l[g] = l[g] * alpha + sum;
      m[g] = m_new;
    }
  }

  // Merge the subgroups.
  [[unroll]] for (uint g = 0; g < HEAD_GROUP; ++g) {
    if (lane == 0u) {
      merge_m[sg * HEAD_GROUP + g] = m[g];
      merge_l[sg * HEAD_GROUP + g] = l[g];
    }
    [[unroll]] for (uint c = 0; c < CPL; ++c) {
      uint ci = lane + c * SG;
      if (ci < D4) merge_acc[(sg * HEAD_GROUP + g) * D4 + ci] = acc[g][c];
    }
  }
  barrier();
  for (uint e = tid; e < HEAD_GROUP * D4; e += WG) {
    uint g = e / D4, ci = e % D4;
    float mm = NEG_INF;
    for (uint s = 0; s < NSG; ++s) mm = max(mm, merge_m[s * HEAD_GROUP + g]);
    float ll = 0.0;
    vec4 o = vec4(0.0);
    for (uint s = 0; s < NSG; ++s) {
      if (text_partial_empty(merge_m[s * HEAD_GROUP + g], merge_l[s * HEAD_GROUP + g])) continue;
      float w = exp(merge_m[s * HEAD_GROUP + g] - mm);
      ll += merge_l[s * HEAD_GROUP + g] * w;
      o += merge_acc[(s * HEAD_GROUP + g) * D4 + ci] * w;
    }
    text_write_row(b, split, qi, head0 + g, ci, o, mm, ll);
  }
}

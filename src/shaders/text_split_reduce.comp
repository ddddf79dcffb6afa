#version 450
// Combines the partial results of a split-KV text attention dispatch:
//   M = max_i m_i,  L = sum_i l_i e^(m_i - M),  O = sum_i acc_i e^(m_i - M) / L,
// in one pass by online rescaling (text_partial_merge.glsl).
// One workgroup per (query row, head, sequence). Its invocations form
// SPLIT_LANES x D/4: each walks every SPLIT_LANES-th split for one vec4 of the
// head dimension, so long split lists are read in parallel, not one by one;
// the lanes' merges then meet in shared memory.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable

#include "text_attention_interface.h"
#include "text_common.glsl"

layout(constant_id = TEXT_SC_HEAD_DIM) const uint D = 64;
layout(constant_id = TEXT_SC_WG_SIZE) const uint WG = 256;
layout(constant_id = TEXT_SC_O_TYPE) const uint O_TYPE = DTYPE_F32;

layout(local_size_x_id = TEXT_SC_WG_SIZE) in;

layout(std430, binding = TEXT_BIND_O) writeonly buffer OBuf4 { uvec4 o_words4[]; };
layout(std430, binding = TEXT_BIND_O) writeonly buffer OBuf2 { uvec2 o_words2[]; };
layout(std430, binding = TEXT_BIND_PARTIAL_O) readonly buffer PartialO { vec4 partial_o[]; };
layout(std430, binding = TEXT_BIND_PARTIAL_ML) readonly buffer PartialML { vec2 partial_ml[]; };
layout(std430, binding = TEXT_BIND_PAGE_TABLE) readonly buffer PageTable { uint page_table[]; };
const uint LAYOUT = TEXT_LAYOUT_CONTIGUOUS;  // addressing helpers' defaults; the reduce reads no keys
const uint KV_TYPE = DTYPE_F32;

#include "text_key_range.glsl"
#include "text_kv_addressing.glsl"

const uint D4 = D / 4;
const uint SPLIT_LANES = WG / D4 > 0 ? WG / D4 : 1;

#include "text_partial_row.glsl"
shared vec4 lane_pool[2 * WG];  // the lanes' merges: o, then (m, l)
void merge_lanes_put(uint i, vec4 v) { lane_pool[i] = v; }
vec4 merge_lanes_get(uint i) { return lane_pool[i]; }
#include "text_partial_merge.glsl"

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint qh = gl_WorkGroupID.x;  // qi * H + h
  const uint b = gl_WorkGroupID.y;
  // Each lane merges every SPLIT_LANES-th split for its column, in one pass;
  // lane 0 of each column merges the other lanes' and writes.
  const uint qi = qh / pc.num_heads, h = qh % pc.num_heads;
  const PartialMerge r = partial_merge_lanes(b, qi, h, tid % D4, D4, SPLIT_LANES);
  if (tid < D4) {
    const uvec4 w = pack_vec4(O_TYPE, text_normalise(r.o, r.l));
    const uint chunk = o_row_elem(b, qi, h) / 4u + tid;
    if (O_TYPE == DTYPE_F32) o_words4[chunk] = w;
    else o_words2[chunk] = w.xy;
  }
}

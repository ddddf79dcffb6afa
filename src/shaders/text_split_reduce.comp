#version 450
// Combines the partial results of a split-KV text attention dispatch:
//   M = max_i m_i,  L = sum_i l_i e^(m_i - M),  O = sum_i acc_i e^(m_i - M) / L.
// One workgroup per (query row, head, sequence). Its invocations form
// SPLIT_LANES x D/4: each walks every SPLIT_LANES-th split for one vec4 of the
// head dimension, so long split lists are read in parallel, not one by one;
// the lanes' sums then meet in shared memory.
#extension GL_GOOGLE_include_directive : require

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
const float NEG_INF = -1.0 / 0.0;

shared float lane_max[WG];
shared vec4 lane_o[WG];
shared float lane_l[WG];

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint qh = gl_WorkGroupID.x;  // qi * H + h
  const uint b = gl_WorkGroupID.y;
  const uint rows = pc.seq_len * pc.num_heads;
  const uint first = b * pc.num_splits * rows + qh;  // row of split 0; split s is s * rows further

  // Step 1: the maximum over splits, every invocation striding the list.
  float m = NEG_INF;
  for (uint s = tid; s < pc.num_splits; s += WG) m = max(m, partial_ml[first + s * rows].x);
  lane_max[tid] = m;
  barrier();
  for (uint stride = WG / 2; stride > 0; stride /= 2) {
    if (tid < stride) lane_max[tid] = max(lane_max[tid], lane_max[tid + stride]);
    barrier();
  }
  m = lane_max[0];

  // Step 2: weighted sums, split lanes x vec4 columns.
  const uint lane = tid / D4, c = tid % D4;
  vec4 o = vec4(0.0);
  float l = 0.0;
  if (lane < SPLIT_LANES) {
    for (uint s = lane; s < pc.num_splits; s += SPLIT_LANES) {
      uint row = first + s * rows;
      vec2 ml = partial_ml[row];
      if (text_partial_empty(ml.x, ml.y)) continue;  // a split that saw no key
      float w = exp(ml.x - m);
      l += ml.y * w;
      o += partial_o[row * D4 + c] * w;
    }
  }
  lane_o[tid] = o;
  lane_l[tid] = l;
  barrier();

  // Step 3: lane 0 of each column adds the other lanes and writes.
  if (tid < D4) {
    for (uint i = 1; i < SPLIT_LANES; ++i) {
      o += lane_o[tid + i * D4];
      l += lane_l[tid + i * D4];
    }
    o = text_normalise(o, l);
    uvec4 w = pack_vec4(O_TYPE, o);
    uint chunk = o_row_elem(b, qh / pc.num_heads, qh % pc.num_heads) / 4u + tid;
    if (O_TYPE == DTYPE_F32) o_words4[chunk] = w;
    else o_words2[chunk] = w.xy;
  }
}

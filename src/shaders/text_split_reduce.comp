#version 450
// Combines the partial results of a split-KV text_attention dispatch:
//   M = max_i m_i,  L = sum_i l_i e^(m_i - M),  O = sum_i acc_i e^(m_i - M) / L.
// One workgroup per (query row, head, sequence); invocations across D/4.
#extension GL_GOOGLE_include_directive : require

#include "text_attention_interface.h"
#include "text_common.glsl"

layout(constant_id = TEXT_SC_HEAD_DIM) const uint D = 64;
layout(constant_id = TEXT_SC_WG_SIZE) const uint WG = 64;
layout(constant_id = TEXT_SC_O_TYPE) const uint O_TYPE = TEXT_DT_F32;

layout(local_size_x_id = TEXT_SC_WG_SIZE) in;

layout(std430, binding = TEXT_BIND_O) writeonly buffer OBuf4 { uvec4 o_words4[]; };
layout(std430, binding = TEXT_BIND_O) writeonly buffer OBuf2 { uvec2 o_words2[]; };
layout(std430, binding = TEXT_BIND_PARTIAL_O) readonly buffer PartialO { vec4 partial_o[]; };
layout(std430, binding = TEXT_BIND_PARTIAL_ML) readonly buffer PartialML { vec2 partial_ml[]; };

const uint D4 = D / 4;

void main() {
  const uint qh = gl_WorkGroupID.x;  // qi * H + h
  const uint b = gl_WorkGroupID.y;
  const uint rows = pc.seq_len * pc.num_heads;
  float m = -1.0 / 0.0;
  for (uint s = 0; s < pc.num_splits; ++s) m = max(m, partial_ml[(b * pc.num_splits + s) * rows + qh].x);
  for (uint c = gl_LocalInvocationID.x; c < D4; c += WG) {
    vec4 o = vec4(0.0);
    float l = 0.0;
    if (m != -1.0 / 0.0) {
      for (uint s = 0; s < pc.num_splits; ++s) {
        uint row = (b * pc.num_splits + s) * rows + qh;
        vec2 ml = partial_ml[row];
        if (ml.x == -1.0 / 0.0) continue;  // a split that saw no key (or never ran)
        float w = exp(ml.x - m);
        l += ml.y * w;
        o += partial_o[row * D4 + c] * w;
      }
    }
    o = l > 0.0 ? o / l : vec4(0.0);
    uint chunk = (b * rows + qh) * D4 + c;
    uvec4 w = pack_vec4(O_TYPE, o);
    if (O_TYPE == TEXT_DT_F32) o_words4[chunk] = w;
    else o_words2[chunk] = w.xy;
  }
}

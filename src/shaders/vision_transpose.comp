#version 450
// Row permutation [A, B, W] -> [B, A, W] of uvec4 words: PHD <-> HPD for the
// head-major vision variant (A = P, B = H one way, A = H, B = P back). Rows of
// a multiple-of-8 head dim are whole words for f32 and f16 alike. A capped grid
// strides over the words, so any tensor size fits the dispatch limits.
#extension GL_GOOGLE_include_directive : require
#define VIS_TRANSPOSE_PUSH 1
#include "vision_interface.h"

layout(local_size_x = VIS_TRANSPOSE_WG) in;
layout(std430, binding = VIS_TRANSPOSE_BIND_SRC) readonly buffer Src { uvec4 src[]; };
layout(std430, binding = VIS_TRANSPOSE_BIND_DST) writeonly buffer Dst { uvec4 dst[]; };

void main() {
  const uint total = pc.rows_a * pc.rows_b * pc.words;
  const uint stride = gl_NumWorkGroups.x * VIS_TRANSPOSE_WG;
  for (uint i = gl_GlobalInvocationID.x; i < total; i += stride) {
    uint w = i % pc.words;
    uint b = (i / pc.words) % pc.rows_b;
    uint a = i / (pc.words * pc.rows_b);
    dst[(b * pc.rows_a + a) * pc.words + w] = src[i];
  }
}

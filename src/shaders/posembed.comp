#version 450
// Vision 2D position-embedding add, in place:
//   hidden[p, d] += table[0, p % patches_x, d] + table[1, p / patches_x, d]
// table is [2, pos_size, hidden] (x rows, then y rows). Each invocation updates
// one uint word (one f32 or two f16); the host checked that every patch's x
// and y are below pos_size, and the shader clamps anyway so no input can make
// it read past the table.
#extension GL_GOOGLE_include_directive : require
#define POSEMBED_PUSH 1
#include "vision_interface.h"

layout(constant_id = POSEMBED_SC_TYPE) const uint TYPE = DTYPE_F32;
layout(local_size_x = POSEMBED_WG) in;
layout(std430, binding = POSEMBED_BIND_HIDDEN) buffer Hidden { uint hidden[]; };
layout(std430, binding = POSEMBED_BIND_TABLE) readonly buffer Table { uint table[]; };

void main() {
  const uint total = pc.patches * pc.hidden_words;
  const uint stride = gl_NumWorkGroups.x * POSEMBED_WG;
  for (uint i = gl_GlobalInvocationID.x; i < total; i += stride) {
    uint p = i / pc.hidden_words, w = i % pc.hidden_words;
    uint px = min(p % pc.patches_x, pc.pos_size - 1u);
    uint py = min(p / pc.patches_x, pc.pos_size - 1u);
    uint ex = table[px * pc.hidden_words + w];
    uint ey = table[(pc.pos_size + py) * pc.hidden_words + w];
    if (TYPE == DTYPE_F32) {
      hidden[i] = floatBitsToUint(uintBitsToFloat(hidden[i]) + uintBitsToFloat(ex) + uintBitsToFloat(ey));
    } else {
      // f32 sum of the three halves, rounded once.
      vec2 s = unpackHalf2x16(hidden[i]) + unpackHalf2x16(ex) + unpackHalf2x16(ey);
      hidden[i] = packHalf2x16(s);
    }
  }
}

#version 450
// Fills a tensor with the benchmark pattern (bench_interface.h) on the GPU, so
// model-sized K/V caches need no host data: each invocation writes u32 words
// (one f32 or two 16-bit elements) in a grid-stride loop.
#extension GL_GOOGLE_include_directive : require
#include "bench_interface.h"

layout(constant_id = BENCH_FILL_SC_TYPE) const uint TYPE = DTYPE_F32;
layout(local_size_x = BENCH_FILL_WG) in;
layout(std430, binding = BENCH_FILL_BIND_DST) writeonly buffer Dst { uint words[]; };

float pattern(uint i) {
  uint x = i ^ (pc.seed * BENCH_SEED_MUL);
  x ^= x >> 16;
  x *= BENCH_HASH_MUL1;
  x ^= x >> 15;
  x *= BENCH_HASH_MUL2;
  x ^= x >> 16;
  return float(int(x >> 24) - 128) / BENCH_VALUE_DIV;
}

void main() {
  const uint stride = gl_NumWorkGroups.x * BENCH_FILL_WG;
  for (uint w = gl_GlobalInvocationID.x; w < pc.count; w += stride) {
    if (TYPE == DTYPE_F32) {
      words[w] = floatBitsToUint(pattern(w));
    } else {
      // Values are exact in 16 bits, so either conversion is exact.
      const float lo = pattern(2u * w), hi = pattern(2u * w + 1u);
      words[w] = TYPE == DTYPE_F16 ? packHalf2x16(vec2(lo, hi))
                                      : (floatBitsToUint(lo) >> 16) | (floatBitsToUint(hi) & 0xffff0000u);
    }
  }
}

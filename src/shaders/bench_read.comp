#version 450
// Read-bandwidth probe: streams a buffer once and sums its u32 words (mod 2^32,
// so the order of additions does not matter and the host can check the sum).
// Each invocation keeps BENCH_READ_UNROLL 16-byte loads in flight per step.
#extension GL_GOOGLE_include_directive : require
#include "bench_interface.h"

layout(local_size_x = BENCH_READ_WG) in;
layout(std430, binding = BENCH_READ_BIND_SRC) readonly buffer Src { uvec4 src[]; };
layout(std430, binding = BENCH_READ_BIND_RESULT) buffer Result { uint result[]; };

shared uint partial[BENCH_READ_WG];

void main() {
  const uint stride = gl_NumWorkGroups.x * BENCH_READ_WG;
  uvec4 acc = uvec4(0);
  uint i = gl_GlobalInvocationID.x;
  // 1. Full steps: UNROLL independent loads, then the adds.
  for (; i + (BENCH_READ_UNROLL - 1) * stride < pc.count; i += BENCH_READ_UNROLL * stride) {
    uvec4 v[BENCH_READ_UNROLL];
    for (uint u = 0; u < BENCH_READ_UNROLL; ++u) v[u] = src[i + u * stride];
    for (uint u = 0; u < BENCH_READ_UNROLL; ++u) acc += v[u];
  }
  // 2. The tail.
  for (; i < pc.count; i += stride) acc += src[i];
  // 3. Workgroup sum in shared memory, one atomic per workgroup.
  partial[gl_LocalInvocationID.x] = acc.x + acc.y + acc.z + acc.w;
  barrier();
  for (uint s = BENCH_READ_WG / 2; s > 0; s >>= 1) {
    if (gl_LocalInvocationID.x < s) partial[gl_LocalInvocationID.x] += partial[gl_LocalInvocationID.x + s];
    barrier();
  }
  if (gl_LocalInvocationID.x == 0) atomicAdd(result[0], partial[0]);
}

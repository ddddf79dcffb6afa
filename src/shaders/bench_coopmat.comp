#version 450
// Cooperative-matrix peak probe (VK_NV_cooperative_matrix, fp16 inputs, fp32
// accumulation): each subgroup runs BENCH_COOP_ACCUMULATORS independent chains
// of `count` multiply-adds on one A and one B tile and stores every
// accumulator, so nothing is dead code and the host can check the result
// (every element equals count * K * a * b for constant tiles).
#extension GL_GOOGLE_include_directive : require
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#include "bench_interface.h"

#if BENCH_COOP_ACCUMULATORS != 8
#error "main() spells out BENCH_COOP_ACCUMULATORS chains"
#endif

layout(local_size_x_id = BENCH_COOP_SC_SUBGROUP_SIZE) in;
layout(std430, binding = BENCH_COOP_BIND_AB) readonly buffer AB { float16_t ab[]; };
layout(std430, binding = BENCH_COOP_BIND_OUT) writeonly buffer Out { float out_tiles[]; };

void main() {
  fcoopmatNV<16, gl_ScopeSubgroup, BENCH_COOP_M, BENCH_COOP_K> a;
  fcoopmatNV<16, gl_ScopeSubgroup, BENCH_COOP_K, BENCH_COOP_N> b;
  coopMatLoadNV(a, ab, 0, BENCH_COOP_K, false);
  coopMatLoadNV(b, ab, BENCH_COOP_M * BENCH_COOP_K, BENCH_COOP_N, false);
  // Separate variables, not an array: glslc 2023.2's optimizer crashes on arrays of cooperative matrices.
  fcoopmatNV<32, gl_ScopeSubgroup, BENCH_COOP_M, BENCH_COOP_N> c0, c1, c2, c3, c4, c5, c6, c7;
  c0 = c1 = c2 = c3 = c4 = c5 = c6 = c7 = fcoopmatNV<32, gl_ScopeSubgroup, BENCH_COOP_M, BENCH_COOP_N>(0.0);
  for (uint it = 0; it < pc.count; ++it) {
    c0 = coopMatMulAddNV(a, b, c0);
    c1 = coopMatMulAddNV(a, b, c1);
    c2 = coopMatMulAddNV(a, b, c2);
    c3 = coopMatMulAddNV(a, b, c3);
    c4 = coopMatMulAddNV(a, b, c4);
    c5 = coopMatMulAddNV(a, b, c5);
    c6 = coopMatMulAddNV(a, b, c6);
    c7 = coopMatMulAddNV(a, b, c7);
  }
  // Each accumulator stored as its own tile: glslc 2023.2's optimizer also crashes on matrix additions.
  const uint base = gl_WorkGroupID.x * BENCH_COOP_ACCUMULATORS * BENCH_COOP_M * BENCH_COOP_N;
  const uint tile = BENCH_COOP_M * BENCH_COOP_N;
  coopMatStoreNV(c0, out_tiles, base + 0 * tile, BENCH_COOP_N, false);
  coopMatStoreNV(c1, out_tiles, base + 1 * tile, BENCH_COOP_N, false);
  coopMatStoreNV(c2, out_tiles, base + 2 * tile, BENCH_COOP_N, false);
  coopMatStoreNV(c3, out_tiles, base + 3 * tile, BENCH_COOP_N, false);
  coopMatStoreNV(c4, out_tiles, base + 4 * tile, BENCH_COOP_N, false);
  coopMatStoreNV(c5, out_tiles, base + 5 * tile, BENCH_COOP_N, false);
  coopMatStoreNV(c6, out_tiles, base + 6 * tile, BENCH_COOP_N, false);
  coopMatStoreNV(c7, out_tiles, base + 7 * tile, BENCH_COOP_N, false);
}

// The tensor-core fragment layer of flash_coopmat.comp: 16x16 tiles as
// GL_NV_cooperative_matrix values held by one subgroup of 32. The emulated
// layer (flash_fragment_emulated.glsl) implements the same functions in plain
// GLSL. Include after `tile_pool` (shared uvec4) is declared; word offsets and
// strides count 16-byte words (8 f16 or 4 f32).
#extension GL_NV_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_ballot : require

#define FragA fcoopmatNV<16, gl_ScopeSubgroup, FLASH_FRAG, FLASH_FRAG>  // f16 left operand
#define FragB fcoopmatNV<16, gl_ScopeSubgroup, FLASH_FRAG, FLASH_FRAG>  // f16 right operand
#define FragC fcoopmatNV<32, gl_ScopeSubgroup, FLASH_FRAG, FLASH_FRAG>  // f32 accumulator
// Loops over arrays of fragments: unrolled, so every fragment stays in registers.
#define FRAG_UNROLL [[unroll]]

// Orders shared-memory accesses among the 32 invocations of a warp (here one
// subgroup), so warps move through their rows' steps independently.
void warp_barrier() {
  subgroupMemoryBarrierShared();
  subgroupBarrier();
}

// atomicMax of shared `mem` with every invocation's `v`: one atomic per warp.
#define WARP_ATOMIC_MAX(mem, v)                  \
  {                                              \
    const uint warp_max_ = subgroupMax(v);       \
    if (subgroupElect()) atomicMax(mem, warp_max_); \
  }

// A from a row-major f16 tile.
void frag_load_a(out FragA f, uint word, uint stride) { coopMatLoadNV(f, tile_pool, word, stride, false); }
// B from a row-major f16 tile (B[k][n] at row k).
void frag_load_b(out FragB f, uint word, uint stride) { coopMatLoadNV(f, tile_pool, word, stride, false); }
// B = M^T from a row-major f16 tile M (B[k][n] at row n, column k).
void frag_load_bt(out FragB f, uint word, uint stride) { coopMatLoadNV(f, tile_pool, word, stride, true); }
void frag_store_c(FragC f, uint word, uint stride) { coopMatStoreNV(f, tile_pool, word, stride, false); }
void frag_fill(out FragC f, float v) { f = FragC(v); }
void frag_scale(inout FragC f, float v) { f = f * v; }
void frag_mul_add(inout FragC c, FragA a, FragB b) { c = coopMatMulAddNV(a, b, c); }
// The accumulator as a left operand (P of P V): each element rounded to f16.
void frag_to_a(out FragA a, FragC c, uint scratch) { a = FragA(c); }

// Element i of this invocation's share of a FragC sits where mma.m16n8k16's
// accumulator puts it: 8 elements per invocation, 0-3 on row lane/4 and 4-7
// on row lane/4 + 8, element i in column 2 (lane % 4) + (i & 1) +
// 8 ((i >> 1) & 1); the 4 invocations of a quad hold a row between them. The
// extension leaves the layout to the implementation, so the runtime checks it
// once per device (flash_layout_probe.comp, DeviceCaps::coop_accumulator_quad)
// and the planner runs this layer only where it holds.
uint frag_row(int i) { return gl_SubgroupInvocationID / 4u + (uint(i) >> 2) * 8u; }
uint frag_col(int i) { return (gl_SubgroupInvocationID % 4u) * 2u + (uint(i) & 1u) + ((uint(i) >> 1) & 1u) * 8u; }

float frag_combine(float a, float b, bool is_max) { return is_max ? max(a, b) : a + b; }

// Per-row values of an invocation's two rows: x for row lane/4 (elements 0-3),
// y for row lane/4 + 8 (elements 4-7).
float frag_row_value(vec2 rows, int i) { return i < 4 ? rows.x : rows.y; }

// This invocation's elements combined per row: the maximum (is_max) or the sum.
vec2 frag_lane_rows(FragC x, bool is_max) {
  return vec2(frag_combine(frag_combine(x[0], x[1], is_max), frag_combine(x[2], x[3], is_max), is_max),
              frag_combine(frag_combine(x[4], x[5], is_max), frag_combine(x[6], x[7], is_max), is_max));
}

#include "fragment_lanes_coopmat.glsl"

// Per-row values combined across the invocations that hold each row (the
// quad, by shuffles; `scratch` is the emulated layer's). Call from
// warp-uniform control flow.
vec2 frag_rows_across(vec2 rows, uint scratch, bool is_max) { return lanes_combined(rows, 1u, 4u, is_max); }

// frag_layout_holds(scratch): whether this implementation's 16x16 f32
// accumulator is laid out as above (64 words of scratch).
DEFINE_LAYOUT_CHECK(frag_layout_holds, FragC, FLASH_FRAG, 8)

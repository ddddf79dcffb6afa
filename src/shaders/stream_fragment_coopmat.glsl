// The tensor-core fragment layer of text_decode_stream.comp:
// GL_NV_cooperative_matrix values of one subgroup of 32 in the shapes of
// mma.m16n8k16, loaded from the warp's staged tiles in shared memory. The
// emulated layer (stream_fragment_emulated.glsl) implements the same functions
// in plain GLSL. Include after `tile_pool` (shared uvec4) is declared; word
// offsets and strides count 16-byte words (8 f16 or 4 f32).
#extension GL_NV_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_ballot : require

#define FragA fcoopmatNV<16, gl_ScopeSubgroup, FLASH_FRAG, FLASH_FRAG>      // f16 16x16 left operand
#define FragB fcoopmatNV<16, gl_ScopeSubgroup, FLASH_FRAG, STREAM_HEADS>    // f16 16x8 right operand
#define FragS fcoopmatNV<32, gl_ScopeSubgroup, FLASH_FRAG, STREAM_HEADS>    // f32 16x8 accumulator
#define FRAG_UNROLL [[unroll]]

uint frag_lane() { return gl_SubgroupInvocationID; }

// Orders the warp's shared-memory accesses, and only those (subgroupBarrier()
// also orders buffer memory, which may wait for the next tile's loads in flight).
void warp_barrier() {
  controlBarrier(gl_ScopeSubgroup, gl_ScopeSubgroup, gl_StorageSemanticsShared, gl_SemanticsAcquireRelease);
}

// A from 16 staged row-major rows (a K tile: keys x 16 columns of the head dim).
void frag_load_a(out FragA f, uint word, uint stride) { coopMatLoadNV(f, tile_pool, word, stride, false); }
// A = M^T for 16 staged rows M (a V tile: A[d][key] = V[key][d]).
void frag_load_at(out FragA f, uint word, uint stride) { coopMatLoadNV(f, tile_pool, word, stride, true); }
// B = M^T for 8 staged rows M (B[k][n] = M[n][k]): Q^T from Q's rows.
void frag_load_bt(out FragB f, uint word, uint stride) { coopMatLoadNV(f, tile_pool, word, stride, true); }

// The largest of the warp's values. Call from warp-uniform control flow.
uint warp_max(uint v, uint scratch) { return subgroupMax(v); }

void frag_fill(out FragS f, float v) { f = FragS(v); }
void frag_mul_add(inout FragS c, FragA a, FragB b) { c = coopMatMulAddNV(a, b, c); }
void frag_store(FragS f, uint word, uint stride) { coopMatStoreNV(f, tile_pool, word, stride, false); }

// The accumulator (already holding f16 values) as a right operand: through
// the warp's `scratch`, so the result does not depend on how the
// implementation lays out either type. Call from warp-uniform control flow.
void frag_to_b(out FragB b, FragS s, uint scratch) {
  const FragB h = FragB(s);
  warp_barrier();  // the warp's last reads of scratch are done
  coopMatStoreNV(h, tile_pool, scratch, 1, false);  // 8 f16 per row: one word
  warp_barrier();
  coopMatLoadNV(b, tile_pool, scratch, 1, false);
}

#include "stream_fragment_layout.glsl"

#include "fragment_lanes_coopmat.glsl"

// Per-column values combined across the 8 invocations that hold each column
// (lanes equal mod 4). Call from warp-uniform control flow.
vec2 frag_cols_across(vec2 cols, uint scratch, bool is_max) { return lanes_combined(cols, 4u, FLASH_WARP, is_max); }

// stream_layout_holds(scratch): whether this implementation's 16x8 f32
// accumulator is laid out as stream_fragment_layout.glsl says (32 words of scratch).
DEFINE_LAYOUT_CHECK(stream_layout_holds, FragS, STREAM_HEADS, 4)

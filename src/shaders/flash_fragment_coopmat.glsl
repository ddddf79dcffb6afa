// The tensor-core fragment layer of flash_coopmat.comp: 16x16 tiles as
// GL_NV_cooperative_matrix values held by one subgroup of 32. The emulated
// layer (flash_fragment_emulated.glsl) implements the same functions in plain
// GLSL. Include after `tile_pool` (shared uvec4) is declared; word offsets and
// strides count 16-byte words (8 f16 or 4 f32).
#extension GL_NV_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require

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

// A from a row-major f16 tile.
void frag_load_a(out FragA f, uint word, uint stride) { coopMatLoadNV(f, tile_pool, word, stride, false); }
// B from a row-major f16 tile (B[k][n] at row k).
void frag_load_b(out FragB f, uint word, uint stride) { coopMatLoadNV(f, tile_pool, word, stride, false); }
// B = M^T from a row-major f16 tile M (B[k][n] at row n, column k).
void frag_load_bt(out FragB f, uint word, uint stride) { coopMatLoadNV(f, tile_pool, word, stride, true); }
void frag_store_c(FragC f, uint word, uint stride) { coopMatStoreNV(f, tile_pool, word, stride, false); }
void frag_fill(out FragC f, float v) { f = FragC(v); }
void frag_mul_add(inout FragC c, FragA a, FragB b) { c = coopMatMulAddNV(a, b, c); }

// Which of the 16 rows each element of this invocation's share of a FragC
// belongs to. The element-to-row mapping is the implementation's, so it is
// read back from a tile whose every element holds its row index (one matrix
// type always has one layout). Uses 64 words at `scratch`; call from uniform
// control flow (it has barriers).
FragC frag_row_index(uint scratch) {
  for (uint i = gl_LocalInvocationIndex; i < FLASH_FRAG * FLASH_FRAG / 4; i += gl_WorkGroupSize.x)
    tile_pool[scratch + i] = floatBitsToUint(vec4(float(i / (FLASH_FRAG / 4))));
  barrier();
  FragC rows;
  coopMatLoadNV(rows, tile_pool, scratch, FLASH_FRAG / 4, false);
  barrier();
  return rows;
}

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

// Whether any invocation of the warp passes `v` (warp-uniform result).
bool warp_any(bool v) { return subgroupMax(v ? 1u : 0u) != 0u; }

// A from a row-major f16 tile.
void frag_load_a(out FragA f, uint word, uint stride) { coopMatLoadNV(f, tile_pool, word, stride, false); }
// B from a row-major f16 tile (B[k][n] at row k).
void frag_load_b(out FragB f, uint word, uint stride) { coopMatLoadNV(f, tile_pool, word, stride, false); }
// B = M^T from a row-major f16 tile M (B[k][n] at row n, column k).
void frag_load_bt(out FragB f, uint word, uint stride) { coopMatLoadNV(f, tile_pool, word, stride, true); }
void frag_store_c(FragC f, uint word, uint stride) { coopMatStoreNV(f, tile_pool, word, stride, false); }
void frag_fill(out FragC f, float v) { f = FragC(v); }
void frag_mul_add(inout FragC c, FragA a, FragB b) { c = coopMatMulAddNV(a, b, c); }
// The accumulator as a left operand (P of P V): each element rounded to f16.
void frag_to_a(out FragA a, FragC c, uint scratch) { a = FragA(c); }

// Where each element of this invocation's share of a FragC sits. The mapping
// is the implementation's, so it is read back from tiles whose every element
// holds its row (column) index; one matrix type always has one layout.
FragC frag_row_of, frag_col_of;
// Whether that layout is the one the shuffle reductions below assume: 8
// elements per invocation, 0, 1, 4, 5 on row lane/4 and 2, 3, 6, 7 on row
// lane/4 + 8, so the 4 invocations of a quad hold a row between them (the
// layout of mma.m16n8k16's accumulator). Any other layout reduces through
// shared memory.
bool frag_quad_rows;

FragC frag_index_tile(uint scratch, bool columns) {
  for (uint i = gl_LocalInvocationIndex; i < FLASH_FRAG * FLASH_FRAG / 4; i += gl_WorkGroupSize.x) {
    const uint row = i / (FLASH_FRAG / 4), col = (i % (FLASH_FRAG / 4)) * 4;
    tile_pool[scratch + i] = floatBitsToUint(columns ? vec4(col, col + 1, col + 2, col + 3) : vec4(row));
  }
  barrier();
  FragC index;
  coopMatLoadNV(index, tile_pool, scratch, FLASH_FRAG / 4, false);
  barrier();
  return index;
}

// Reads the layout; uses 64 words at `scratch`. Call once, from uniform
// control flow (it has barriers).
void frag_layout_init(uint scratch) {
  frag_row_of = frag_index_tile(scratch, false);
  frag_col_of = frag_index_tile(scratch, true);
  const uint lane = gl_SubgroupInvocationID;
  bool quad = frag_row_of.length() == 8;
  [[unroll]] for (int i = 0; i < frag_row_of.length(); ++i)
    quad = quad && uint(frag_row_of[i]) == lane / 4u + ((uint(i) >> 1) & 1u) * 8u;
  frag_quad_rows = subgroupMin(quad ? 1u : 0u) != 0u;
}

float frag_combine(float a, float b, bool is_max) { return is_max ? max(a, b) : a + b; }

// Every element becomes the maximum (is_max) or the sum of its row's 16
// elements. `scratch`: this warp's FLASH_FRAG x FLASH_SCRATCH_STRIDE words,
// used only off the quad layout. Call from warp-uniform control flow.
FragC frag_row_reduce(FragC x, uint scratch, bool is_max) {
  FragC r = x;
  if (frag_quad_rows) {
    float lo = frag_combine(frag_combine(x[0], x[1], is_max), frag_combine(x[4], x[5], is_max), is_max);
    float hi = frag_combine(frag_combine(x[2], x[3], is_max), frag_combine(x[6], x[7], is_max), is_max);
    [[unroll]] for (uint m = 1; m <= 2; m *= 2) {
      lo = frag_combine(lo, subgroupShuffleXor(lo, m), is_max);
      hi = frag_combine(hi, subgroupShuffleXor(hi, m), is_max);
    }
    r[0] = lo; r[1] = lo; r[4] = lo; r[5] = lo;
    r[2] = hi; r[3] = hi; r[6] = hi; r[7] = hi;
    return r;
  }
  // Two invocations per row, 8 elements each; each writes back the words it read.
  coopMatStoreNV(x, tile_pool, scratch, FLASH_SCRATCH_STRIDE, false);
  warp_barrier();
  const uint lane = gl_SubgroupInvocationID;
  const uint at = scratch + (lane / 2u) * FLASH_SCRATCH_STRIDE + (lane % 2u) * 2u;
  const vec4 a = uintBitsToFloat(tile_pool[at]), b = uintBitsToFloat(tile_pool[at + 1]);
  float v = a.x;
  [[unroll]] for (uint e = 1; e < 8; ++e) v = frag_combine(v, e < 4 ? a[e] : b[e - 4], is_max);
  v = frag_combine(v, subgroupShuffleXor(v, 1u), is_max);
  tile_pool[at] = floatBitsToUint(vec4(v));
  tile_pool[at + 1] = floatBitsToUint(vec4(v));
  warp_barrier();
  coopMatLoadNV(r, tile_pool, scratch, FLASH_SCRATCH_STRIDE, false);
  warp_barrier();
  return r;
}

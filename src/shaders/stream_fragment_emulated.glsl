// The plain-GLSL fragment layer of text_decode_stream.comp, for devices
// without cooperative matrices (lavapipe in CI): the same functions as
// stream_fragment_coopmat.glsl, so the kernel's tile walk, staging, masking,
// softmax and merge run unchanged. A warp is 32 invocations;
// an accumulator keeps mma.m16n8k16's element layout
// (stream_fragment_layout.glsl), and each invocation holds the operand values
// its four products need: A's two rows lane/4 and lane/4 + 8, B's two columns
// 2 (lane % 4) and the next, so a multiply needs no exchange. Include after
// `tile_pool` (shared uvec4) is declared; word offsets and strides count
// 16-byte words.

#define FragA float[2 * FLASH_FRAG]  // [h * 16 + k]: A[lane/4 + 8h][k]
#define FragB float[2 * FLASH_FRAG]  // [h * 16 + k]: B[k][2 (lane%4) + h]
#define FragS float[4]               // element i: row lane/4 + 8 (i >> 1), column 2 (lane%4) + (i & 1)
// Loops over arrays of fragments: left rolled, which keeps the lavapipe
// pipeline compile short (the arrays live in memory there anyway).
#define FRAG_UNROLL [[dont_unroll]]

uint frag_lane() { return gl_LocalInvocationIndex % FLASH_WARP; }

// A warp here is 32 invocations, not a subgroup: the whole workgroup waits.
void warp_barrier() { barrier(); }

// Without subgroups the answer is always yes: callers use it only to skip
// work that changes nothing.
bool warp_any(bool v) { return true; }

// f16 element e (0-7) of a word.
float frag_half(uvec4 w, uint e) { return unpackHalf2x16(w[e / 2u])[e % 2u]; }

// A[r][k] = M[r][k] for staged rows of 16 f16 (two words) at word + r * stride.
void frag_load_a(out FragA f, uint word, uint stride) {
  for (uint h = 0; h < 2; ++h) {
    const uint row = word + (frag_lane() / 4u + 8u * h) * stride;
    for (uint k = 0; k < FLASH_FRAG; ++k) f[h * FLASH_FRAG + k] = frag_half(tile_pool[row + k / 8u], k % 8u);
  }
}

// A[r][k] = M[k][r]: row r of A is column r of the 16 staged rows of M.
void frag_load_at(out FragA f, uint word, uint stride) {
  for (uint h = 0; h < 2; ++h) {
    const uint r = frag_lane() / 4u + 8u * h;
    for (uint k = 0; k < FLASH_FRAG; ++k) f[h * FLASH_FRAG + k] = frag_half(tile_pool[word + k * stride + r / 8u], r % 8u);
  }
}

// B[k][n] = M[n][k] for 8 staged rows M: column n of B is row n of M.
void frag_load_bt(out FragB f, uint word, uint stride) {
  for (uint h = 0; h < 2; ++h) {
    const uint row = word + ((frag_lane() % 4u) * 2u + h) * stride;
    for (uint k = 0; k < FLASH_FRAG; ++k) f[h * FLASH_FRAG + k] = frag_half(tile_pool[row + k / 8u], k % 8u);
  }
}

// The largest of the warp's values, through `scratch` (32 words).
uint warp_max(uint v, uint scratch) {
  warp_barrier();
  tile_pool[scratch + frag_lane()].x = v;
  warp_barrier();
  uint m = 0u;
  for (uint j = 0; j < FLASH_WARP; ++j) m = max(m, tile_pool[scratch + j].x);
  return m;
}

void frag_fill(out FragS f, float v) { f = FragS(v, v, v, v); }

void frag_mul_add(inout FragS c, FragA a, FragB b) {
  for (int i = 0; i < 4; ++i) {
    float s = c[i];
    for (uint k = 0; k < FLASH_FRAG; ++k) s = fma(a[(i >> 1) * FLASH_FRAG + k], b[(i & 1) * FLASH_FRAG + k], s);
    c[i] = s;
  }
}

#include "stream_fragment_layout.glsl"

// Row-major f32 rows of 8 (two words) at word + row * stride.
void frag_store(FragS f, uint word, uint stride) {
  for (int i = 0; i < 4; ++i) {
    const uint c = frag_col(i);
    tile_pool[word + frag_row(i) * stride + c / 4u][c % 4u] = floatBitsToUint(f[i]);
  }
}

// The accumulator (already holding f16 values) as a right operand: the
// columns this invocation needs come from the others through `scratch`
// (32 words: 16 rows of 8 f32).
void frag_to_b(out FragB b, FragS s, uint scratch) {
  warp_barrier();
  frag_store(s, scratch, 2u);
  warp_barrier();
  for (uint h = 0; h < 2; ++h) {
    const uint c = (frag_lane() % 4u) * 2u + h;
    for (uint k = 0; k < FLASH_FRAG; ++k) b[h * FLASH_FRAG + k] = uintBitsToFloat(tile_pool[scratch + 2u * k + c / 4u][c % 4u]);
  }
}

// Per-column values combined across the 8 invocations that hold each column
// (lanes equal mod 4), through `scratch` (32 words).
vec2 frag_cols_across(vec2 cols, uint scratch, bool is_max) {
  warp_barrier();
  tile_pool[scratch + frag_lane()].xy = floatBitsToUint(cols);
  warp_barrier();
  // In lane order, so every holder of a column gets the same bits.
  vec2 v = uintBitsToFloat(tile_pool[scratch + frag_lane() % 4u].xy);
  for (uint j = 1; j < FLASH_WARP / 4u; ++j) {
    const vec2 o = uintBitsToFloat(tile_pool[scratch + j * 4u + frag_lane() % 4u].xy);
    v = vec2(frag_combine(v.x, o.x, is_max), frag_combine(v.y, o.y, is_max));
  }
  return v;
}

// The plain-GLSL fragment layer of flash_coopmat.comp, for devices without
// cooperative matrices (lavapipe in CI): the same functions as
// flash_fragment_coopmat.glsl, so the kernel's tiling, masking, softmax and
// addressing run unchanged. Each group of 32 invocations (a warp) holds a
// 16x16 tile; invocation `lane` owns row lane/2, columns (lane%2)*8 .. +8 of an
// accumulator, and holds the operand values its products need, so a multiply
// needs no exchange between invocations. Include after `tile_pool` (shared
// uvec4) is declared; word offsets and strides count 16-byte words.

const uint FRAG_HALF = FLASH_FRAG / 2;  // accumulator columns per invocation

#define FragA float[FLASH_FRAG]               // row lane/2 of A, all 16 columns
#define FragB float[FLASH_FRAG * FRAG_HALF]   // [k * 8 + c]: B[k][(lane%2)*8 + c]
#define FragC float[FRAG_HALF]                // row lane/2, columns (lane%2)*8 + c

// Loops over arrays of fragments: left rolled, which keeps the lavapipe
// pipeline compile short (the arrays live in memory there anyway).
#define FRAG_UNROLL [[dont_unroll]]

// A warp here is 32 invocations, not a subgroup: the whole workgroup waits.
void warp_barrier() { barrier(); }

// Whether any invocation of the warp passes `v`. Without subgroups the answer
// is always yes: callers use it only to skip work that changes nothing.
bool warp_any(bool v) { return true; }

uint frag_lane() { return gl_LocalInvocationIndex % FLASH_WARP; }

// atomicMax of shared `mem` with every invocation's `v` (here each its own).
#define WARP_ATOMIC_MAX(mem, v) atomicMax(mem, v)

// The 8 f16 values of one word, widened (values are f16 already, so exact).
void unpack8(uvec4 w, out float v[8]) {
  vec2 p0 = unpackHalf2x16(w.x), p1 = unpackHalf2x16(w.y), p2 = unpackHalf2x16(w.z), p3 = unpackHalf2x16(w.w);
  v = float[8](p0.x, p0.y, p1.x, p1.y, p2.x, p2.y, p3.x, p3.y);
}

void frag_load_a(out FragA f, uint word, uint stride) {
  const uint row = word + (frag_lane() / 2) * stride;
  float v[8];
  for (uint h = 0; h < 2; ++h) {
    unpack8(tile_pool[row + h], v);
    for (uint c = 0; c < 8; ++c) f[h * 8 + c] = v[c];
  }
}

void frag_load_b(out FragB f, uint word, uint stride) {
  float v[8];
  for (uint k = 0; k < FLASH_FRAG; ++k) {
    unpack8(tile_pool[word + k * stride + frag_lane() % 2], v);
    for (uint c = 0; c < FRAG_HALF; ++c) f[k * FRAG_HALF + c] = v[c];
  }
}

void frag_load_bt(out FragB f, uint word, uint stride) {
  float v[8];
  for (uint c = 0; c < FRAG_HALF; ++c) {
    const uint row = word + ((frag_lane() % 2) * FRAG_HALF + c) * stride;  // column n of B is row n of M
    for (uint h = 0; h < 2; ++h) {
      unpack8(tile_pool[row + h], v);
      for (uint k = 0; k < 8; ++k) f[(h * 8 + k) * FRAG_HALF + c] = v[k];
    }
  }
}

void frag_store_c(FragC f, uint word, uint stride) {
  const uint at = word + (frag_lane() / 2) * stride + (frag_lane() % 2) * 2;
  tile_pool[at] = floatBitsToUint(vec4(f[0], f[1], f[2], f[3]));
  tile_pool[at + 1] = floatBitsToUint(vec4(f[4], f[5], f[6], f[7]));
}

void frag_fill(out FragC f, float v) {
  for (uint c = 0; c < FRAG_HALF; ++c) f[c] = v;
}

void frag_scale(inout FragC f, float v) {
  for (uint c = 0; c < FRAG_HALF; ++c) f[c] *= v;
}

void frag_mul_add(inout FragC c, FragA a, FragB b) {
  for (uint n = 0; n < FRAG_HALF; ++n) {
    float s = c[n];
    for (uint k = 0; k < FLASH_FRAG; ++k) s = fma(a[k], b[k * FRAG_HALF + n], s);
    c[n] = s;
  }
}

// The accumulator as a left operand, each element rounded to f16 (as the
// tensor-core conversion does): the row's other half comes from the partner
// invocation through the warp's `scratch` (64 words).
void frag_to_a(out FragA a, FragC c, uint scratch) {
  const uint row_words = FLASH_FRAG / 4;  // a row of 16 f32
  frag_store_c(c, scratch, row_words);
  warp_barrier();
  const uint row = scratch + (frag_lane() / 2) * row_words;
  for (uint w = 0; w < row_words; ++w) {
    const vec4 v = uintBitsToFloat(tile_pool[row + w]);
    for (uint e = 0; e < 4; ++e) a[w * 4 + e] = unpackHalf2x16(packHalf2x16(vec2(v[e], 0.0))).x;
  }
  warp_barrier();
}

// Row and column of element i of this invocation's share of a FragC.
uint frag_row(int i) { return frag_lane() / 2; }
uint frag_col(int i) { return (frag_lane() % 2) * FRAG_HALF + uint(i); }

// Per-row values of an invocation's rows: here one row (lane/2), held in both components.
float frag_row_value(vec2 rows, int i) { return rows.x; }

// This invocation's elements combined per row: the maximum (is_max) or the sum.
vec2 frag_lane_rows(FragC x, bool is_max) {
  float v = x[0];
  for (uint c = 1; c < FRAG_HALF; ++c) v = is_max ? max(v, x[c]) : v + x[c];
  return vec2(v);
}

// Per-row values combined with the partner invocation's (the row's other
// 8 columns) through `scratch` (32 words of this warp's).
vec2 frag_rows_across(vec2 rows, uint scratch, bool is_max) {
  tile_pool[scratch + frag_lane()] = uvec4(floatBitsToUint(rows.x));
  warp_barrier();
  const float other = uintBitsToFloat(tile_pool[scratch + (frag_lane() ^ 1u)].x);
  warp_barrier();
  return vec2(is_max ? max(rows.x, other) : rows.x + other);
}

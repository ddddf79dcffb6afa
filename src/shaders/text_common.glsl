// Element decoding and encoding shared by the text kernels. Storage is read as
// uvec4 words, so f16/bf16 need no 16-bit storage feature and a row of a
// multiple-of-8 head dim is always whole words.

vec2 bf16x2_to_vec2(uint w) { return vec2(uintBitsToFloat(w << 16), uintBitsToFloat(w & 0xffff0000u)); }

// Unpacks one uvec4 of `type` into 4 (f32) or 8 (f16/bf16) floats: lo gets the first 4.
void unpack_words(uint type, uvec4 w, out vec4 lo, out vec4 hi) {
  if (type == DTYPE_F32) {
    lo = uintBitsToFloat(w);
    hi = vec4(0.0);
  } else if (type == DTYPE_F16) {
    lo = vec4(unpackHalf2x16(w.x), unpackHalf2x16(w.y));
    hi = vec4(unpackHalf2x16(w.z), unpackHalf2x16(w.w));
  } else {
    lo = vec4(bf16x2_to_vec2(w.x), bf16x2_to_vec2(w.y));
    hi = vec4(bf16x2_to_vec2(w.z), bf16x2_to_vec2(w.w));
  }
}

// The largest |x| of one word's 8 values (lo, hi). Its f32 bits order like
// the non-negative values, so atomicMax and subgroupMax on them take maxima.
float abs_max8(vec4 lo, vec4 hi) {
  const vec4 m = max(abs(lo), abs(hi));
  return max(max(m.x, m.y), max(m.z, m.w));
}

// Elements per uvec4 of a storage type.
uint elems_per_word4(uint type) { return type == DTYPE_F32 ? 4u : 8u; }

uvec4 pack_f16x8(vec4 lo, vec4 hi) {
  return uvec4(packHalf2x16(lo.xy), packHalf2x16(lo.zw), packHalf2x16(hi.xy), packHalf2x16(hi.zw));
}

// Word w (8 columns) of the row starting at element `elem` of a Q, K or V
// buffer of uvec4 `words`, as f16: f32 storage is rounded here, once (the
// tensor-core kernels' operands are f16).
#define F16_ROW_WORD(words, type, elem, w)                                                           \
  ((type) == DTYPE_F16 ? words[(elem) / 8 + (w)]                                                 \
                         : pack_f16x8(uintBitsToFloat(words[(elem) / 4 + 2 * (w)]),                 \
                                      uintBitsToFloat(words[(elem) / 4 + 2 * (w) + 1])))

// Word w (8 columns) of the row starting at element `elem` of an f32 or bf16
// buffer of uvec4 `words`, as floats: columns 0-3 into lo, 4-7 into hi.
#define ROW_FLOATS(words, type, elem, w, lo, hi)                                                     \
  if ((type) == DTYPE_BF16) {                                                                        \
    unpack_words(DTYPE_BF16, words[(elem) / 8 + (w)], lo, hi);                                      \
  } else {                                                                                           \
    lo = uintBitsToFloat(words[(elem) / 4 + 2 * (w)]);                                               \
    hi = uintBitsToFloat(words[(elem) / 4 + 2 * (w) + 1]);                                           \
  }

// Staging bf16 (or f32) in f16 fragments as f16 times a power of two. bf16
// has f16's precision and more (8 bits of mantissa against 11) but f32's
// exponents, so values divided by 2^s, s chosen from their largest |x|, land
// in f16 exactly where they lie within 2^-31 of that largest; smaller ones add
// less than f32 rounding to a dot product. bf16's largest values (below
// 2^128) need 2^-113 to fit under 2^15; its smallest would need 2^147, past
// f32, so values whose largest |x| is below 2^-111 are staged at 2^126 and
// keep fewer bits, as they add nothing a score or an f32 output could show.
// Both powers stay normal f32.
const int F16_STAGE_MOST_SHIFT = 113;
const int F16_STAGE_LEAST_SHIFT = -126;
// A running power (one that only grows, as values come) before any value: 2^-1000 is 0 in f32.
const int F16_STAGE_SHIFT_NONE = -1000;
// s for values whose largest |x| is `top`: it lands in [2^14, 2^15), clear of
// f16's overflow. 0 for zeros, and for inf or NaN, which stay so at any power.
int f16_stage_shift(float top) {
  if (top == 0.0 || isinf(top) || isnan(top)) return 0;
  int e;
  frexp(top, e);  // 2^(e-1) <= top < 2^e
  return clamp(e - 15, F16_STAGE_LEAST_SHIFT, F16_STAGE_MOST_SHIFT);
}

// The factor that takes values held divided by 2^from to values divided by
// 2^to (a running power that grew, or 0 to undo it): 0 where nothing was held
// yet (F16_STAGE_SHIFT_NONE), and at most 126 octaves down, so it stays a
// normal f32; what it would take lower is below anything the new values show.
float f16_stage_rescale(int from, int to) {
  return from == F16_STAGE_SHIFT_NONE ? 0.0 : ldexp(1.0, max(from - to, -126));
}

uint float_to_bf16_bits(float x) {
  uint u = floatBitsToUint(x);
  if ((u & 0x7f800000u) == 0x7f800000u) return (u >> 16) | ((u & 0xffffu) != 0u ? 0x40u : 0u);
  return (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;  // round to nearest even
}

// Four floats encoded in `type`: a uvec4 for f32 (all four used) or the first
// two words for f16/bf16.
uvec4 pack_vec4(uint type, vec4 v) {
  if (type == DTYPE_F32) return floatBitsToUint(v);
  if (type == DTYPE_F16) return uvec4(packHalf2x16(v.xy), packHalf2x16(v.zw), 0u, 0u);
  return uvec4(float_to_bf16_bits(v.x) | (float_to_bf16_bits(v.y) << 16),
               float_to_bf16_bits(v.z) | (float_to_bf16_bits(v.w) << 16), 0u, 0u);
}

// Online-softmax steps shared by the text kernels. NaN or Inf in the caller's
// Q/K/V must reach the output as NaN: max() may drop a NaN score, so the NaN is
// carried by the running sum instead, and no step turns it into zero.

// exp(s - m) for a score s against the running max m; a masked key (-inf) weighs 0.
float text_softmax_weight(float s, float m) { return isinf(s) && s < 0.0 ? 0.0 : exp(s - m); }

// A partial result (running max m, running sum l) that saw no key; one whose
// scores were all NaN has m = -inf too, but its NaN sum must still be merged.
bool text_partial_empty(float m, float l) { return isinf(m) && m < 0.0 && !isnan(l); }

// The normalised output: zeros for a row that saw no key (l == 0), NaN stays NaN.
vec4 text_normalise(vec4 acc, float l) { return l == 0.0 ? vec4(0.0) : acc / l; }

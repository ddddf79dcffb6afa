// The f16 scale of a quantized K/V row or group (kv_quant_interface.h), encoded
// and decoded by hand in both directions: rounding is round-to-nearest-even
// exactly as the host reference does it, and subnormal scales (the point of
// KV_QUANT_SCALE_MIN_BITS) are never flushed by packHalf2x16/unpackHalf2x16.
#include "kv_quant_interface.h"

float kvq_scale_value(uint h) {
  const uint e = (h >> 10) & 31u, m = h & 1023u;
  return e == 0u ? float(m) * (1.0 / 16777216.0) : uintBitsToFloat(((e + 112u) << 23) | (m << 13));
}

// f16 bits of absmax / code_max: 1.0 for an all-zero row, never 0 for a
// non-zero one, never past the largest finite f16.
uint kvq_scale_bits(float absmax, float code_max) {
  if (absmax == 0.0) return KV_QUANT_SCALE_ONE_BITS;
  const float s = absmax / code_max;
  if (!(s < 65520.0)) return KV_QUANT_SCALE_MAX_BITS;  // would round to infinity (or is NaN)
  uint h;
  if (s < 6.103515625e-05) {
    h = uint(roundEven(s * 16777216.0));  // subnormal: units of 2^-24 (the product is exact)
  } else {
    const uint u = floatBitsToUint(s);
    const uint rest = u & 0x1fffu;
    h = ((((u >> 23) - 112u) << 10) | ((u >> 13) & 1023u));
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u) != 0u)) h += 1u;  // a carry moves into the exponent, as it should
  }
  return max(h, KV_QUANT_SCALE_MIN_BITS);
}

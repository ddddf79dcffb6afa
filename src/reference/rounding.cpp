#include "reference/rounding.hpp"

#include <fmt/format.h>

#include <bit>
#include <cmath>

#include "vkattn/error.hpp"

namespace vkattn::reference {

float f16_to_float(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exp = (bits >> 10) & 0x1fu;
  const uint32_t mant = bits & 0x3ffu;
  if (exp == 0) {  // zero or subnormal: mant * 2^-24, exact in f32
    const float magnitude = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));  // inf / NaN
  return std::bit_cast<float>(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

uint16_t float_to_f16(float value) {
  const uint32_t x = std::bit_cast<uint32_t>(value);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t exp = (x >> 23) & 0xffu;
  uint32_t mant = x & 0x7fffffu;
  if (exp == 0xff)  // inf stays inf; NaN keeps its top payload bits and is made quiet
    return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u | (mant >> 13) : 0u));

  const int e = static_cast<int>(exp) - 127 + 15;  // biased f16 exponent
  if (e >= 31) return sign | 0x7c00u;              // beyond the f16 range
  if (e <= 0) {
    // Subnormal result. Below half the smallest subnormal (2^-25) everything
    // rounds to zero; exactly 2^-25 (e == -10) is a tie that rounds to even 0.
    if (e < -10) return sign;
    mant |= 0x800000u;  // implicit leading one
    const uint32_t shift = static_cast<uint32_t>(14 - e);  // 14..24
    uint32_t half = mant >> shift;
    const uint32_t rest = mant & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1u))) ++half;  // may carry into the smallest normal
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  const uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;  // a carry out of 0x7bff gives inf
  return static_cast<uint16_t>(sign | half);
}

float bf16_to_float(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

uint16_t float_to_bf16(float value) {
  const uint32_t x = std::bit_cast<uint32_t>(value);
  if (std::isnan(value)) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet, never rounds to inf
  const uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);                    // ties to even
  return static_cast<uint16_t>((x + rounding) >> 16);
}

namespace {

void require_float_dtype(DType dtype) {
  if (dtype != DType::f32 && dtype != DType::f16 && dtype != DType::bf16)
    throw Error(ErrorKind::invalid_argument,
                fmt::format("dtype: expected f32, f16 or bf16 for rounding, got {}", to_string(dtype)));
}

}  // namespace

float round_to(DType dtype, float value) {
  require_float_dtype(dtype);
  if (dtype == DType::f16) return f16_to_float(float_to_f16(value));
  if (dtype == DType::bf16) return bf16_to_float(float_to_bf16(value));
  return value;
}

void round_to(DType dtype, std::span<float> values) {
  require_float_dtype(dtype);
  if (dtype == DType::f32) return;
  for (float& v : values) v = round_to(dtype, v);
}

}  // namespace vkattn::reference

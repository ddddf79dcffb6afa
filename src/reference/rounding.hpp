// Host-side rounding of f32 values to the 16-bit float formats the GPU stores,
// so the float64 oracle sees exactly the values a kernel reads.
#pragma once

#include <cstdint>
#include <span>

#include "vkattn/types.hpp"

namespace vkattn::reference {

// IEEE 754 binary16. float_to_f16 rounds to nearest, ties to even; it keeps
// subnormals, overflows to infinity and turns NaN into a quiet NaN.
float f16_to_float(uint16_t bits);
uint16_t float_to_f16(float value);

// bfloat16 (the upper half of an f32). float_to_bf16 rounds to nearest, ties
// to even; NaN stays a (quiet) NaN.
float bf16_to_float(uint16_t bits);
uint16_t float_to_bf16(float value);

// `value` as stored in `dtype` and read back: identity for f32, the rounding
// above for f16 and bf16. Other dtypes throw Error naming "dtype".
float round_to(DType dtype, float value);
// The same for every element, in place.
void round_to(DType dtype, std::span<float> values);

}  // namespace vkattn::reference

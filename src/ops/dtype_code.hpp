// The DTYPE_* code (src/shaders/dtype_interface.h) of a tensor dtype, for the
// dtype specialization constants of every family's shaders.
#pragma once

#include <cstdint>

#include "vkattn/tensor.hpp"

namespace vkattn {

// f32 for dtypes no shader stores (u32 index tensors never take a dtype constant).
uint32_t dtype_code(DType t);

// int8/int4: codes with f16 scales (kv_quant_interface.h), K/V caches only.
bool is_quantized(DType t);

}  // namespace vkattn

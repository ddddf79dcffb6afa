#include "ops/dtype_code.hpp"

#include "shaders/dtype_interface.h"

namespace vkattn {

uint32_t dtype_code(DType t) {
  switch (t) {
    case DType::f16: return DTYPE_F16;
    case DType::bf16: return DTYPE_BF16;
    case DType::i8: return DTYPE_INT8;
    case DType::i4: return DTYPE_INT4;
    default: return DTYPE_F32;
  }
}

bool is_quantized(DType t) { return t == DType::i8 || t == DType::i4; }

}  // namespace vkattn

// Element storage codes of every shader's dtype specialization constants and
// of src/ops/dtype_code.cpp, declared once for all families.
#ifndef VKATTN_DTYPE_INTERFACE_H
#define VKATTN_DTYPE_INTERFACE_H

#define DTYPE_F32 0
#define DTYPE_F16 1
#define DTYPE_BF16 2
#define DTYPE_INT8 3  // quantized KV (kv_quant_interface.h), scales in TEXT_BIND_K_SCALE / _V_SCALE
#define DTYPE_INT4 4

#endif

// The int8/int4 quantized KV format (doppler's, so caches are interchangeable),
// shared by the kernels that read it (kv_quant.glsl), the one that writes it
// (kv_append.comp), the host reference (src/reference/kv_quant_reference.cpp)
// and the validation of tensors.
//
// Per (token, KV head) row of D elements: signed codes in two's complement,
// packed little-endian into u32 words (lane i of a word in bits 8i..8i+7 for
// int8, 4i..4i+3 for int4; lanes past D are zero), packed_stride = ceil(D/4)
// (int8) or ceil(D/8) (int4) words per row. One f16 scale per row, or with the
// group option one per KV_QUANT_GROUP elements along D. A value is
// code * scale. The scale is absmax / KV_QUANT_*_MAX rounded to f16 first and
// the codes are computed with that rounded scale (so dequantizing inverts what
// quantizing did), round half to even, clamped to +-KV_QUANT_*_MAX.
#ifndef VKATTN_KV_QUANT_INTERFACE_H
#define VKATTN_KV_QUANT_INTERFACE_H

#define KV_QUANT_INT8_MAX 127
#define KV_QUANT_INT4_MAX 7
#define KV_QUANT_INT8_LANES 4  // codes per u32 word
#define KV_QUANT_INT4_LANES 8

// Scale granularity (TEXT_SC_KV_GROUP, KVA_SC_GROUP): 0 is one scale per (token,
// KV head) row; KV_QUANT_GROUP is one scale per 32 elements along D.
#define KV_QUANT_GROUP_ROW 0
#define KV_QUANT_GROUP 32

// f16 bit patterns of the scale: an all-zero row gets 1.0 (as doppler); a row
// whose absmax / MAX is below the smallest f16 subnormal keeps the smallest
// subnormal instead of flushing to 0 (which would turn every code into 0/0);
// a row too large for f16 keeps the largest finite f16 (codes then clamp).
#define KV_QUANT_SCALE_ONE_BITS 0x3c00u
#define KV_QUANT_SCALE_MIN_BITS 0x0001u  // 2^-24
#define KV_QUANT_SCALE_MAX_BITS 0x7bffu  // 65504

#ifdef __cplusplus
#include <cstdint>
namespace vkattn::kvquant {
// The most a code can be in magnitude, for `lanes` codes per word.
constexpr uint32_t code_max(uint32_t lanes) { return lanes == KV_QUANT_INT8_LANES ? KV_QUANT_INT8_MAX : KV_QUANT_INT4_MAX; }
// u32 words per (token, KV head) row of head dim d.
constexpr uint32_t packed_stride(uint32_t lanes, uint32_t d) { return (d + lanes - 1) / lanes; }
// Scales per (token, KV head) row.
constexpr uint32_t scale_groups(uint32_t group, uint32_t d) {
  return group == KV_QUANT_GROUP_ROW ? 1u : (d + group - 1) / group;
}
}  // namespace vkattn::kvquant
#endif

#endif

// Host reference of the int8/int4 quantized KV format (src/shaders/kv_quant_interface.h):
// what kv_append must write, what the kernels must read, and the bound that
// quantization puts on an attention output.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "vkattn/text.hpp"
#include "vkattn/types.hpp"

namespace vkattn::reference {

// `rows` rows of `d` values quantized as `dtype` (i8 or i4) with one scale per
// row (group 0) or per `group` elements: packed words [rows, packed_stride]
// and f16 scale bits [rows, groups].
struct QuantizedRows {
  std::vector<uint32_t> words;
  std::vector<uint16_t> scales;
};
QuantizedRows quantize_rows(DType dtype, uint32_t group, uint32_t d, std::span<const float> rows);

// The f16 scale of a row or group with this absmax, rounded from the f32
// quotient absmax / code_max (as the kernel computes it).
uint16_t quant_scale_bits(float absmax, uint32_t code_max);

// Code of one value with the (already rounded) scale s: round half to even, clamped.
int32_t quant_code(double x, double s, uint32_t code_max);

// The values a kernel reads from quantized rows (code * scale, exact in f32).
std::vector<float> dequantize_rows(DType dtype, uint32_t group, uint32_t d, std::span<const uint32_t> words,
                                   std::span<const uint16_t> scales);

// The most one dequantized value can differ from the value it came from, per
// row (its largest over the groups): half a scale step, or what clamping cut
// off where the rounded scale came out below absmax / code_max.
std::vector<double> quant_row_error(DType dtype, uint32_t group, uint32_t d, std::span<const float> rows,
                                    std::span<const uint16_t> scales);

// A bound on |attention over dequantized K/V - attention over the original K/V|,
// per output element [B, S, H, D]. Each score moves by at most
// delta = scale * sum|q| * eK (eK the largest K row error), so each softmax
// weight moves by a factor within e^(+-2 delta) and sum_j |p'_j - p_j| <=
// min(e^(2 delta) - 1, 2) (two distributions differ by at most 2); the output
// moves by at most min(e^(2 delta) - 1, 2) * max|v| + eV.
// Softcap only shrinks score differences. k_err/v_err are quant_row_error of
// the cache rows; v is the original V.
std::vector<double> quant_attention_bound(const TextAttentionParams& p, std::span<const float> q,
                                          std::span<const float> v, std::span<const double> k_err,
                                          std::span<const double> v_err);

}  // namespace vkattn::reference

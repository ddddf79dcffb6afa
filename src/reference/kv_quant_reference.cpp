#include "reference/kv_quant_reference.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "reference/rounding.hpp"
#include "shaders/kv_quant_interface.h"
#include "vkattn/error.hpp"

namespace vkattn::reference {

namespace {

uint32_t lanes_of(DType dtype) {
  if (dtype == DType::i8) return KV_QUANT_INT8_LANES;
  if (dtype == DType::i4) return KV_QUANT_INT4_LANES;
  throw Error(ErrorKind::invalid_argument, fmt::format("dtype: expected i8 or i4, got {}", to_string(dtype)));
}

// Elements [first, last) of group g of a row.
std::pair<uint32_t, uint32_t> group_span(uint32_t group, uint32_t d, uint32_t g) {
  if (group == KV_QUANT_GROUP_ROW) return {0, d};
  return {g * group, std::min(d, (g + 1) * group)};
}

void check_rows(uint32_t d, size_t values) {
  if (d == 0 || values % d)
    throw Error(ErrorKind::invalid_argument, fmt::format("rows: expected a multiple of d ({}) values, got {}", d, values));
}

}  // namespace

uint16_t quant_scale_bits(float absmax, uint32_t code_max) {
  if (absmax == 0.0f) return KV_QUANT_SCALE_ONE_BITS;
  const float s = absmax / float(code_max);
  if (!(s < 65520.0f)) return KV_QUANT_SCALE_MAX_BITS;
  return std::max<uint16_t>(float_to_f16(s), KV_QUANT_SCALE_MIN_BITS);
}

int32_t quant_code(double x, double s, uint32_t code_max) {
  const double c = std::nearbyint(x / s);  // the default rounding mode: half to even
  return int32_t(std::clamp(c, -double(code_max), double(code_max)));
}

QuantizedRows quantize_rows(DType dtype, uint32_t group, uint32_t d, std::span<const float> rows) {
  check_rows(d, rows.size());
  const uint32_t lanes = lanes_of(dtype), bits = 32 / lanes, cmax = kvquant::code_max(lanes);
  const uint32_t stride = kvquant::packed_stride(lanes, d), groups = kvquant::scale_groups(group, d);
  const size_t n = rows.size() / d;
  QuantizedRows out;
  out.words.assign(n * stride, 0);
  out.scales.assign(n * groups, 0);
  for (size_t r = 0; r < n; ++r)
    for (uint32_t g = 0; g < groups; ++g) {
      auto [lo, hi] = group_span(group, d, g);
      float absmax = 0.0f;
      for (uint32_t i = lo; i < hi; ++i) absmax = std::max(absmax, std::fabs(rows[r * d + i]));
      const uint16_t sb = quant_scale_bits(absmax, cmax);
      out.scales[r * groups + g] = sb;
      const double s = f16_to_float(sb);
      for (uint32_t i = lo; i < hi; ++i) {
        const uint32_t code = uint32_t(quant_code(rows[r * d + i], s, cmax)) & ((1u << bits) - 1);
        out.words[r * stride + i / lanes] |= code << (bits * (i % lanes));
      }
    }
  return out;
}

std::vector<float> dequantize_rows(DType dtype, uint32_t group, uint32_t d, std::span<const uint32_t> words,
                                   std::span<const uint16_t> scales) {
  const uint32_t lanes = lanes_of(dtype), bits = 32 / lanes;
  const uint32_t stride = kvquant::packed_stride(lanes, d), groups = kvquant::scale_groups(group, d);
  const size_t n = words.size() / stride;
  if (words.size() % stride || scales.size() != n * groups)
    throw Error(ErrorKind::invalid_argument,
                fmt::format("scales: expected {} scales for {} rows of {} words, got {} scales and {} words",
                            n * groups, n, stride, scales.size(), words.size()));
  std::vector<float> out(n * d);
  for (size_t r = 0; r < n; ++r)
    for (uint32_t i = 0; i < d; ++i) {
      const uint32_t w = words[r * stride + i / lanes] >> (bits * (i % lanes));
      int32_t code = int32_t(w & ((1u << bits) - 1));
      if (code >= int32_t(1u << (bits - 1))) code -= int32_t(1u << bits);  // two's complement
      const uint32_t g = group == KV_QUANT_GROUP_ROW ? 0 : i / group;
      out[r * d + i] = float(code) * f16_to_float(scales[r * groups + g]);
    }
  return out;
}

std::vector<double> quant_row_error(DType dtype, uint32_t group, uint32_t d, std::span<const float> rows,
                                    std::span<const uint16_t> scales) {
  check_rows(d, rows.size());
  const uint32_t cmax = kvquant::code_max(lanes_of(dtype)), groups = kvquant::scale_groups(group, d);
  const size_t n = rows.size() / d;
  if (scales.size() != n * groups)
    throw Error(ErrorKind::invalid_argument,
                fmt::format("scales: expected {} ({} rows x {} groups), got {}", n * groups, n, groups, scales.size()));
  std::vector<double> out(n, 0.0);
  for (size_t r = 0; r < n; ++r)
    for (uint32_t g = 0; g < groups; ++g) {
      auto [lo, hi] = group_span(group, d, g);
      double absmax = 0.0;
      for (uint32_t i = lo; i < hi; ++i) absmax = std::max(absmax, std::fabs(double(rows[r * d + i])));
      const double s = f16_to_float(scales[r * groups + g]);
      out[r] = std::max({out[r], s / 2, absmax - cmax * s});
    }
  return out;
}

std::vector<double> quant_attention_bound(const TextAttentionParams& p, std::span<const float> q,
                                          std::span<const float> v, std::span<const double> k_err,
                                          std::span<const double> v_err) {
  const double ek = k_err.empty() ? 0.0 : *std::max_element(k_err.begin(), k_err.end());
  const double ev = v_err.empty() ? 0.0 : *std::max_element(v_err.begin(), v_err.end());
  double vmax = 0.0;
  for (float x : v) vmax = std::max(vmax, std::fabs(double(x)));
  const uint32_t d = p.head_dim;
  std::vector<double> out(q.size());
  for (size_t row = 0; row * d < q.size(); ++row) {
    double qsum = 0.0;
    for (uint32_t i = 0; i < d; ++i) qsum += std::fabs(double(q[row * d + i]));
    const double delta = std::fabs(double(p.effective_scale())) * qsum * ek;
    // The weights are two distributions: they differ by at most 2 in total, however large delta is.
    std::fill_n(out.begin() + row * d, d, std::min(std::expm1(2 * delta), 2.0) * vmax + ev);
  }
  return out;
}

}  // namespace vkattn::reference

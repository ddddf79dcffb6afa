#include "run_text_quant.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <tuple>

#include "reference/kv_quant_reference.hpp"
#include "reference/text_reference.hpp"
#include "reference/tolerance.hpp"
#include "shaders/kv_quant_interface.h"
#include "vkattn/error.hpp"
#include "vkattn/kvcache.hpp"
#include "vkattn/recorder.hpp"

namespace vkattn::cli {

QuantizedCache quantize_cache(Context& ctx, const Tensor& k, const Tensor& v, DType dtype, uint32_t group) {
  const Shape& s = k.shape();
  const uint32_t d = uint32_t(s[3]), hkv = uint32_t(s[2]);
  const uint64_t slots = s[0] * s[1];
  // Every slot of every page or sequence is one token of a single contiguous sequence.
  KvAppendParams ap;
  ap.tokens = uint32_t(slots);
  ap.num_kv_heads = hkv;
  ap.head_dim = d;
  ap.kv_capacity = uint32_t(slots);
  ap.quant_group = group;
  const Shape rows{1, slots, hkv, d};
  Shape scale_shape{s[0], s[1], hkv}, row_scales{1, slots, hkv};
  if (group) {
    scale_shape.push_back(kvquant::scale_groups(group, d));
    row_scales.push_back(scale_shape.back());
  }
  QuantizedCache c;
  c.k = ctx.tensor(dtype, s);
  c.v = ctx.tensor(dtype, s);
  c.k_scale = ctx.tensor(DType::f16, scale_shape);
  c.v_scale = ctx.tensor(DType::f16, scale_shape);
  KvAppendTensors t;
  t.k = k.reshaped(rows);
  t.v = v.reshaped(rows);
  t.cache_k = c.k.reshaped(rows);
  t.cache_v = c.v.reshaped(rows);
  t.k_scale = c.k_scale.reshaped(row_scales);
  t.v_scale = c.v_scale.reshaped(row_scales);
  Recorder rec(ctx);
  kv_append(rec, ap, t);
  rec.run();
  for (auto [codes, scales, values, scale_bits] : {std::tuple{&c.k, &c.k_scale, &c.k_values, &c.k_scales},
                                                   {&c.v, &c.v_scale, &c.v_values, &c.v_scales}}) {
    std::vector<uint32_t> words(codes->bytes() / 4);
    ctx.download(*codes, std::as_writable_bytes(std::span(words)));
    scale_bits->resize(element_count(scale_shape));
    std::vector<uint16_t> all(scales->bytes() / 2);
    ctx.download(*scales, std::as_writable_bytes(std::span(all)));
    std::copy_n(all.begin(), scale_bits->size(), scale_bits->begin());
    *values = reference::dequantize_rows(dtype, group, d, words, *scale_bits);
  }
  return c;
}

QuantizedCache load_packed_cache(Context& ctx, const io::NpyArray& k, const io::NpyArray& v,
                                 const io::NpyArray& k_scale, const io::NpyArray& v_scale, DType dtype, uint32_t d,
                                 uint32_t group) {
  const uint32_t lanes = 32 / dtype_bits(dtype);
  QuantizedCache c;
  for (auto [codes, scales, values, scale_bits, words_npy, scale_npy, name] :
       {std::tuple{&c.k, &c.k_scale, &c.k_values, &c.k_scales, &k, &k_scale, "k_scale"},
        {&c.v, &c.v_scale, &c.v_values, &c.v_scales, &v, &v_scale, "v_scale"}}) {
    if (scale_npy->descr != "<f2")
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("{}: expected float16 ('<f2') scales, got '{}'", name, scale_npy->descr));
    // The codes seen as elements of `dtype`: the library checks the packed stride against d.
    Shape shape(words_npy->shape.begin(), words_npy->shape.end());
    shape.back() *= lanes;
    *codes = ctx.tensor(dtype, shape);
    ctx.upload(*codes, words_npy->data);
    *scales = ctx.tensor(DType::f16, Shape(scale_npy->shape.begin(), scale_npy->shape.end()));
    ctx.upload(*scales, scale_npy->data);
    const std::vector<uint32_t> words = io::as_u32(*words_npy);
    scale_bits->resize(scale_npy->data.size() / 2);
    std::memcpy(scale_bits->data(), scale_npy->data.data(), scale_npy->data.size());
    if (shape.back() == uint64_t(kvquant::packed_stride(lanes, d)) * lanes)
      *values = reference::dequantize_rows(dtype, group, d, words, *scale_bits);
  }
  return c;
}

bool check_quantized(const TextAttentionParams& p, const reference::Tolerance& tol, const std::vector<float>& q,
                     const std::vector<float>& k, const std::vector<float>& v, const QuantizedCache& cache,
                     DType dtype, const std::vector<float>& got, const std::vector<uint32_t>& table) {
  const auto exact = reference::compare(got, reference::text_attention(p, q, cache.k_values, cache.v_values, table), tol);
  fmt::print("max relative error vs float64 oracle over the dequantized cache: {:.3e} (tolerance {:.1e}) {}\n",
             exact.rel_err, tol.abs_rel, exact.passed ? "PASS" : "FAIL");
  const auto want = reference::text_attention(p, q, k, v, table);
  const auto bound = reference::quant_attention_bound(
      p, q, v, reference::quant_row_error(dtype, p.kv_quant_group, p.head_dim, k, cache.k_scales),
      reference::quant_row_error(dtype, p.kv_quant_group, p.head_dim, v, cache.v_scales));
  double max_want = 0.0, err = 0.0, allowed = 0.0, worst = -INFINITY;
  for (double w : want) max_want = std::max(max_want, std::fabs(w));
  for (size_t i = 0; i < want.size(); ++i) {
    const double e = std::fabs(got[i] - want[i]), a = bound[i] + tol.abs_rel * max_want;
    const double margin = std::isnan(e) ? INFINITY : e - a;
    if (margin > worst) std::tie(worst, err, allowed) = std::tuple{margin, e, a};
  }
  const bool e2e = worst <= 0;
  fmt::print("max error vs float64 oracle over the original K/V: {:.3e} (quantization bound {:.3e}) {}\n", err,
             allowed, e2e ? "PASS" : "FAIL");
  return exact.passed && e2e;
}

}  // namespace vkattn::cli

// `vkattn run text --kv-dtype i8|i4`: the float K/V of the .npy inputs
// quantized into an int8/int4 cache on the GPU by kv_append, and the two
// oracle checks of a quantized cache.
#pragma once

#include <cstdint>
#include <vector>

#include "io/npy.hpp"
#include "reference/tolerance.hpp"
#include "vkattn/context.hpp"
#include "vkattn/text.hpp"

namespace vkattn::cli {

struct QuantizedCache {
  Tensor k, v, k_scale, v_scale;
  std::vector<float> k_values, v_values;  // dequantized: what the kernels read
  std::vector<uint16_t> k_scales, v_scales;
};

// k, v: float caches of any layout ([outer, slots, Hkv, D]), every row quantized.
QuantizedCache quantize_cache(Context& ctx, const Tensor& k, const Tensor& v, DType dtype, uint32_t group);

// A cache quantized elsewhere: packed u32 words [.., Hkv, packed_stride] and
// f16 scales, as .npy arrays. A packed stride that does not match head_dim d
// is the library's error.
QuantizedCache load_packed_cache(Context& ctx, const io::NpyArray& k, const io::NpyArray& v,
                                 const io::NpyArray& k_scale, const io::NpyArray& v_scale, DType dtype, uint32_t d,
                                 uint32_t group);

// Prints both checks (oracle over the dequantized values; original data within
// the quantization bound), each at tolerance `tol`, and returns whether both passed.
bool check_quantized(const TextAttentionParams& p, const reference::Tolerance& tol, const std::vector<float>& q,
                     const std::vector<float>& k, const std::vector<float>& v, const QuantizedCache& cache,
                     DType dtype, const std::vector<float>& got, const std::vector<uint32_t>& table);

}  // namespace vkattn::cli

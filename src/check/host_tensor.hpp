// Host values of a float tensor and their storage bytes, shared by the check
// cases: what they upload is exactly what the oracle sees.
#pragma once

#include <cstddef>
#include <random>
#include <vector>

#include "vkattn/context.hpp"
#include "vkattn/tensor.hpp"
#include "vkattn/types.hpp"

namespace vkattn::check {

// Values rounded to `t` (what the GPU will see) and their storage bytes.
struct HostTensor {
  std::vector<float> values;
  std::vector<std::byte> bytes;
};

// f32, f16 or bf16.
HostTensor encode(DType t, std::vector<float> values);
// The first n values of f32/f16/bf16 storage bytes, widened to float.
std::vector<float> decode(DType t, const std::vector<std::byte>& bytes, size_t n);

// n normal values times `scale`.
std::vector<float> normal(std::mt19937& rng, size_t n, float scale);
// A new tensor holding `bytes`.
Tensor upload(Context& ctx, DType t, Shape shape, const std::vector<std::byte>& bytes);
Tensor upload_u32(Context& ctx, const std::vector<uint32_t>& v);  // shape [v.size()]
// One value per sequence (a single value repeated).
std::vector<uint32_t> per_batch(const std::vector<uint32_t>& v, uint32_t batch);

}  // namespace vkattn::check

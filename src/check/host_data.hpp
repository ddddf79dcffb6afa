// Host-side inputs of the check cases: random values rounded to a storage
// dtype (what the GPU will see, and what the oracle reads) and their bytes.
#pragma once

#include <cstddef>
#include <random>
#include <vector>

#include "vkattn/context.hpp"
#include "vkattn/tensor.hpp"

namespace vkattn::check {

struct HostTensor {
  std::vector<float> values;     // rounded to the dtype
  std::vector<std::byte> bytes;  // its storage
};

HostTensor encode(DType t, std::vector<float> values);
std::vector<float> decode(DType t, const std::vector<std::byte>& bytes, size_t n);
std::vector<float> normal(std::mt19937& rng, size_t n, float scale);
Tensor upload(Context& ctx, DType t, Shape shape, const std::vector<std::byte>& bytes);
Tensor upload_u32(Context& ctx, const std::vector<uint32_t>& v);
// One value per sequence (a single value repeated).
std::vector<uint32_t> per_batch(const std::vector<uint32_t>& v, uint32_t batch);

}  // namespace vkattn::check

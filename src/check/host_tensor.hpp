// Host-side data of the check cases, shared by every family: values rounded
// to a storage dtype with their bytes, decoding downloaded bytes, random
// inputs, uploads and downloads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "vkattn/context.hpp"
#include "vkattn/tensor.hpp"

namespace vkattn::check::host {

// Values as the GPU will read them (rounded to `t`: f32 | f16 | bf16) and their bytes.
struct Values {
  std::vector<float> values;
  std::vector<std::byte> bytes;
};
Values to_storage(DType t, std::vector<float> values);
std::vector<float> from_storage(DType t, const std::vector<std::byte>& bytes, size_t count);
std::vector<float> gaussian(std::mt19937& rng, size_t count, float stddev);
Tensor upload(Context& ctx, DType t, Shape shape, const std::vector<std::byte>& bytes);
Tensor upload_u32(Context& ctx, const std::vector<uint32_t>& v);
std::vector<float> download(Context& ctx, const Tensor& t, size_t count);
// One value per sequence (a single value repeated).
std::vector<uint32_t> per_batch(const std::vector<uint32_t>& v, uint32_t batch);

}  // namespace vkattn::check::host

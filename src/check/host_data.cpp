#include "check/host_data.hpp"

#include <cstring>

#include "reference/rounding.hpp"

namespace vkattn::check {

HostTensor encode(DType t, std::vector<float> values) {
  HostTensor h;
  reference::round_to(t, values);
  if (t == DType::f32) {
    h.bytes.resize(values.size() * 4);
    std::memcpy(h.bytes.data(), values.data(), h.bytes.size());
  } else {
    std::vector<uint16_t> bits(values.size());
    for (size_t i = 0; i < values.size(); ++i)
      bits[i] = t == DType::f16 ? reference::float_to_f16(values[i]) : reference::float_to_bf16(values[i]);
    h.bytes.resize(bits.size() * 2);
    std::memcpy(h.bytes.data(), bits.data(), h.bytes.size());
  }
  h.values = std::move(values);
  return h;
}

std::vector<float> decode(DType t, const std::vector<std::byte>& bytes, size_t n) {
  std::vector<float> out(n);
  if (t == DType::f32) {
    std::memcpy(out.data(), bytes.data(), n * 4);
  } else {
    std::vector<uint16_t> bits(n);
    std::memcpy(bits.data(), bytes.data(), n * 2);
    for (size_t i = 0; i < n; ++i)
      out[i] = t == DType::f16 ? reference::f16_to_float(bits[i]) : reference::bf16_to_float(bits[i]);
  }
  return out;
}

std::vector<float> normal(std::mt19937& rng, size_t n, float scale) {
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng) * scale;
  return v;
}

Tensor upload(Context& ctx, DType t, Shape shape, const std::vector<std::byte>& bytes) {
  Tensor tensor = ctx.tensor(t, std::move(shape));
  ctx.upload(tensor, bytes);
  return tensor;
}

Tensor upload_u32(Context& ctx, const std::vector<uint32_t>& v) {
  Tensor t = ctx.tensor(DType::u32, {v.size()});
  ctx.upload(t, v);
  return t;
}

std::vector<uint32_t> per_batch(const std::vector<uint32_t>& v, uint32_t batch) {
  return v.size() == 1 ? std::vector<uint32_t>(batch, v[0]) : v;
}

}  // namespace vkattn::check

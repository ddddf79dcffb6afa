#include "check/host_tensor.hpp"

#include <algorithm>
#include <cstring>

#include "reference/rounding.hpp"

namespace vkattn::check::host {

Values to_storage(DType t, std::vector<float> values) {
  Values out;
  reference::round_to(t, values);
  if (t == DType::f32) {
    out.bytes.resize(values.size() * 4);
    if (!values.empty()) std::memcpy(out.bytes.data(), values.data(), out.bytes.size());  // (null data when empty)
  } else {
    std::vector<uint16_t> bits(values.size());
    for (size_t i = 0; i < values.size(); ++i)
      bits[i] = t == DType::f16 ? reference::float_to_f16(values[i]) : reference::float_to_bf16(values[i]);
    out.bytes.resize(bits.size() * 2);
    if (!bits.empty()) std::memcpy(out.bytes.data(), bits.data(), out.bytes.size());
  }
  out.values = std::move(values);
  return out;
}

std::vector<float> from_storage(DType t, const std::vector<std::byte>& bytes, size_t count) {
  std::vector<float> out(count);
  for (size_t i = 0; i < count; ++i) {
    if (t == DType::f16 || t == DType::bf16) {
      uint16_t h;
      std::memcpy(&h, &bytes[i * 2], 2);
      out[i] = t == DType::f16 ? reference::f16_to_float(h) : reference::bf16_to_float(h);
    } else {
      std::memcpy(&out[i], &bytes[i * 4], 4);
    }
  }
  return out;
}

std::vector<float> gaussian(std::mt19937& rng, size_t count, float stddev) {
  std::normal_distribution<float> dist(0.0f, stddev);
  std::vector<float> v(count);
  std::generate(v.begin(), v.end(), [&] { return dist(rng); });
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

std::vector<float> download(Context& ctx, const Tensor& t, size_t count) {
  std::vector<std::byte> bytes(t.bytes());
  ctx.download(t, bytes);
  return from_storage(t.dtype(), bytes, count);
}

std::vector<uint32_t> per_batch(const std::vector<uint32_t>& v, uint32_t batch) {
  return v.size() == 1 ? std::vector<uint32_t>(batch, v[0]) : v;
}

}  // namespace vkattn::check::host

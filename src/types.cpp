#include <fmt/format.h>

#include "vkattn/error.hpp"
#include "vkattn/tensor.hpp"
#include "vkattn/plan.hpp"
#include "vkattn/text.hpp"
#include "vkattn/types.hpp"
#include "util/checked_size.hpp"

#include <cmath>

namespace vkattn {

std::string_view to_string(DType t) {
  switch (t) {
    case DType::f32: return "f32";
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::u32: return "u32";
    case DType::i8: return "i8";
    case DType::i4: return "i4";
  }
  return "?";
}

DType dtype_from_string(std::string_view name) {
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::u32, DType::i8, DType::i4})
    if (to_string(t) == name) return t;
  throw Error(ErrorKind::invalid_argument,
              fmt::format("dtype: expected one of f32, f16, bf16, u32, i8, i4, got '{}'", name));
}

uint32_t dtype_bits(DType t) {
  switch (t) {
    case DType::f32:
    case DType::u32: return 32;
    case DType::f16:
    case DType::bf16: return 16;
    case DType::i8: return 8;
    case DType::i4: return 4;
  }
  return 32;
}

size_t dtype_storage_bytes(DType t, size_t count) {
  const uint64_t bits = checked_add(checked_mul(count, dtype_bits(t), "bytes"), 31, "bytes");
  return bits / 32 * 4;
}

std::string shape_to_string(const Shape& s) {
  return fmt::format("[{}]", fmt::join(s, ", "));
}

uint64_t element_count(const Shape& s) {
  uint64_t n = 1;
  for (auto d : s)
    if (__builtin_mul_overflow(n, d, &n))
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("shape: expected an element count below 2^64, got the element count of shape {}",
                              shape_to_string(s)));
  return n;
}

uint64_t furthest_element(const Shape& shape, const Shape& strides) {
  uint64_t last = 0;
  for (size_t i = 0; i < shape.size(); ++i)
    last = checked_add(last, checked_mul(shape[i] ? shape[i] - 1 : 0, strides.at(i), "strides"), "strides");
  return last;
}

Tensor::Tensor(std::shared_ptr<vk::Allocation> owner, VkBuffer buffer, VkDeviceSize offset, VkDeviceSize bytes,
               DType dtype, Shape shape)
    : owner_(std::move(owner)), buffer_(buffer), offset_(offset), bytes_(bytes), dtype_(dtype), shape_(std::move(shape)) {}

Shape Tensor::contiguous_strides(const Shape& shape) {
  Shape s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

Shape Tensor::strides() const { return strides_.empty() ? contiguous_strides(shape_) : strides_; }

Tensor Tensor::strided(Shape strides) const {
  if (strides.size() != shape_.size())
    throw Error(ErrorKind::invalid_argument, fmt::format("strides: expected {} values (one per dimension of {}), got {}",
                                                         shape_.size(), shape_to_string(shape_), strides.size()));
  const uint64_t last = furthest_element(shape_, strides);
  if (dtype_storage_bytes(dtype_, last + 1) > bytes_)
    throw Error(ErrorKind::invalid_argument,
                fmt::format("strides: expected the furthest element of {} with strides {} within {} bytes, got "
                            "element {}",
                            shape_to_string(shape_), shape_to_string(strides), bytes_, last));
  Tensor t = *this;
  t.strides_ = std::move(strides);
  return t;
}

Tensor Tensor::reshaped(Shape shape) const {
  if (dtype_storage_bytes(dtype_, element_count(shape)) > bytes_)
    throw Error(ErrorKind::invalid_argument,
                fmt::format("shape: expected at most {} bytes of {}, got shape {}", bytes_, to_string(dtype_),
                            shape_to_string(shape)));
  Tensor t = *this;
  t.shape_ = std::move(shape);
  t.strides_.clear();
  return t;
}

std::string_view to_string(KvLayout l) {
  switch (l) {
    case KvLayout::contiguous: return "contiguous";
    case KvLayout::ring: return "ring";
    case KvLayout::paged: return "paged";
    case KvLayout::tiered: return "tiered";
  }
  return "?";
}

KvLayout kv_layout_from_string(std::string_view name) {
  for (KvLayout l : {KvLayout::contiguous, KvLayout::ring, KvLayout::paged, KvLayout::tiered})
    if (to_string(l) == name) return l;
  throw Error(ErrorKind::invalid_argument,
              fmt::format("layout: expected contiguous, ring, paged or tiered, got '{}'", name));
}

std::string_view to_string(Phase p) { return p == Phase::decode ? "decode" : "prefill"; }

float TextAttentionParams::effective_scale() const {
  return scale ? *scale : 1.0f / std::sqrt(static_cast<float>(head_dim));
}

}  // namespace vkattn

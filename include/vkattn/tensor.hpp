// A typed view of a Vulkan buffer range: vkattn's own allocation or a
// caller's VkBuffer wrapped without taking ownership.
#pragma once

#include <vulkan/vulkan.h>

#include <memory>

#include "vkattn/export.hpp"
#include "vkattn/types.hpp"

namespace vkattn {

namespace vk {
class Allocation;
}

class VKATTN_API Tensor {
 public:
  Tensor() = default;
  Tensor(std::shared_ptr<vk::Allocation> owner, VkBuffer buffer, VkDeviceSize offset, VkDeviceSize bytes,
         DType dtype, Shape shape);

  bool valid() const { return buffer_ != VK_NULL_HANDLE; }
  VkBuffer buffer() const { return buffer_; }
  VkDeviceSize offset() const { return offset_; }
  VkDeviceSize bytes() const { return bytes_; }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  uint64_t elements() const { return element_count(shape_); }
  // The same memory seen with another shape (element count must fit).
  Tensor reshaped(Shape shape) const;
  // Element strides, one per dimension; row-major contiguous unless set.
  Shape strides() const;
  bool contiguous() const { return strides_.empty() || strides_ == contiguous_strides(shape_); }
  // The same memory seen with explicit strides (in elements), e.g. Q, K and V
  // as views into one fused projection buffer. The furthest element must fit.
  Tensor strided(Shape strides) const;
  static Shape contiguous_strides(const Shape& shape);
  // vkattn's allocation behind the tensor (null for wrapped caller buffers);
  // recorders hold it so a tensor freed after recording stays valid until reset.
  const std::shared_ptr<vk::Allocation>& allocation() const { return owner_; }

 private:
  std::shared_ptr<vk::Allocation> owner_;  // null for wrapped caller buffers
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceSize offset_ = 0;
  VkDeviceSize bytes_ = 0;
  DType dtype_ = DType::f32;
  Shape shape_;
  Shape strides_;  // empty: contiguous
};

}  // namespace vkattn

// One VkBuffer with its own VkDeviceMemory.
#pragma once

#include <vulkan/vulkan.h>

#include <atomic>
#include <cstdint>

namespace vkattn::vk {

class Allocation {
 public:
  // device_address: the buffer may be read through its device address (the
  // device has bufferDeviceAddress enabled).
  Allocation(VkDevice device, const VkPhysicalDeviceMemoryProperties& props, VkDeviceSize bytes, bool host_visible,
             bool device_address);
  ~Allocation();
  Allocation(const Allocation&) = delete;
  Allocation& operator=(const Allocation&) = delete;

  VkBuffer buffer() const { return buffer_; }
  VkDeviceSize bytes() const { return bytes_; }
  // Host pointer when the memory is host-visible and coherent, else null.
  void* mapped() const { return mapped_; }
  // Allocations alive in the process: tests prove failures and soaks leak none.
  static int64_t live() { return live_; }

 private:
  VkDevice device_;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  VkDeviceSize bytes_ = 0;
  void* mapped_ = nullptr;
  static inline std::atomic<int64_t> live_{0};
};

}  // namespace vkattn::vk

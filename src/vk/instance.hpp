// A VkInstance, optionally with the Khronos validation layer, whose messages
// are counted so tests can fail on any of them.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <vector>

namespace vkattn::vk {

class Instance {
 public:
  explicit Instance(bool validation);
  ~Instance();
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  VkInstance handle() const { return instance_; }
  std::vector<VkPhysicalDevice> physical_devices() const;
  static uint64_t validation_messages();

 private:
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
};

}  // namespace vkattn::vk

#include "vk/allocation.hpp"

#include <fmt/format.h>

#include "vk/check.hpp"
#include "vk/fault_injection.hpp"
#include "vkattn/error.hpp"

namespace vkattn::vk {

namespace {

// Device-local first (fast on GPUs); host-visible+coherent when the host maps it.
int find_memory_type(const VkPhysicalDeviceMemoryProperties& props, uint32_t allowed, bool host_visible) {
  const VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  auto pick = [&](VkMemoryPropertyFlags want) -> int {
    for (uint32_t i = 0; i < props.memoryTypeCount; ++i)
      if ((allowed & (1u << i)) && (props.memoryTypes[i].propertyFlags & want) == want) return static_cast<int>(i);
    return -1;
  };
  if (host_visible) {
    int t = pick(host | VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
    return t >= 0 ? t : pick(host);
  }
  int t = pick(VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  return t >= 0 ? t : pick(0);
}

}  // namespace

Allocation::Allocation(VkDevice device, const VkPhysicalDeviceMemoryProperties& props, VkDeviceSize bytes,
                       bool host_visible, bool device_address)
    : device_(device), bytes_(bytes) {
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = bytes == 0 ? 4 : bytes;
  info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
               VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT |
               (device_address ? VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT : 0u);
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  check(vkCreateBuffer(device_, &info, nullptr, &buffer_), fmt::format("creating a buffer of {} bytes", bytes));
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device_, buffer_, &req);
  int type = find_memory_type(props, req.memoryTypeBits, host_visible);
  if (type < 0) {
    vkDestroyBuffer(device_, buffer_, nullptr);
    throw Error(ErrorKind::out_of_memory, fmt::format("no memory type for a buffer of {} bytes", bytes));
  }
  VkMemoryAllocateFlagsInfo flags_info{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
  flags_info.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
  VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, device_address ? &flags_info : nullptr};
  alloc.allocationSize = req.size;
  alloc.memoryTypeIndex = static_cast<uint32_t>(type);
  VkResult r = injected_fault(FaultSite::allocation);
  if (r == VK_SUCCESS) r = vkAllocateMemory(device_, &alloc, nullptr, &memory_);
  if (r != VK_SUCCESS) {
    vkDestroyBuffer(device_, buffer_, nullptr);
    check(r, fmt::format("allocating {} bytes of device memory", req.size));
  }
  vkBindBufferMemory(device_, buffer_, memory_, 0);
  const VkMemoryPropertyFlags flags = props.memoryTypes[type].propertyFlags;
  const VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  if ((flags & host) == host) {
    r = vkMapMemory(device_, memory_, 0, VK_WHOLE_SIZE, 0, &mapped_);
    if (r != VK_SUCCESS) {
      vkDestroyBuffer(device_, buffer_, nullptr);
      vkFreeMemory(device_, memory_, nullptr);
      check(r, "mapping memory");
    }
  }
  ++live_;
}

Allocation::~Allocation() {
  --live_;
  if (mapped_) vkUnmapMemory(device_, memory_);
  vkDestroyBuffer(device_, buffer_, nullptr);
  vkFreeMemory(device_, memory_, nullptr);
}

}  // namespace vkattn::vk

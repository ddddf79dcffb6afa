// The Vulkan functions vkattn calls, resolved at run time instead of linked:
// from the loader (libvulkan.so.1), so a machine without one gets a clear
// error naming the package, not a program that cannot start; or through a
// host's vkGetInstanceProcAddr (ExternalDevice::get_instance_proc_addr). They
// are process-wide: one loader per process. Calls inside namespace vkattn
// find these pointers before the global prototypes.
#pragma once

#include <vulkan/vulkan.h>

// X(name) for every entry point used; extension functions are fetched with
// vkGetInstanceProcAddr where they are used.
#define VKATTN_VULKAN_FUNCTIONS(X) \
  X(vkGetInstanceProcAddr) \
  X(vkAllocateCommandBuffers) \
  X(vkAllocateDescriptorSets) \
  X(vkAllocateMemory) \
  X(vkBeginCommandBuffer) \
  X(vkBindBufferMemory) \
  X(vkCmdBindDescriptorSets) \
  X(vkCmdBindPipeline) \
  X(vkCmdCopyBuffer) \
  X(vkCmdDispatch) \
  X(vkCmdDispatchIndirect) \
  X(vkCmdFillBuffer) \
  X(vkCmdPipelineBarrier) \
  X(vkCmdPushConstants) \
  X(vkCmdResetQueryPool) \
  X(vkCmdUpdateBuffer) \
  X(vkCmdWriteTimestamp) \
  X(vkCreateBuffer) \
  X(vkCreateCommandPool) \
  X(vkCreateComputePipelines) \
  X(vkCreateDescriptorPool) \
  X(vkCreateDescriptorSetLayout) \
  X(vkCreateDevice) \
  X(vkCreateFence) \
  X(vkCreateInstance) \
  X(vkCreatePipelineLayout) \
  X(vkCreateQueryPool) \
  X(vkCreateShaderModule) \
  X(vkDestroyBuffer) \
  X(vkDestroyCommandPool) \
  X(vkDestroyDescriptorPool) \
  X(vkDestroyDescriptorSetLayout) \
  X(vkDestroyDevice) \
  X(vkDestroyFence) \
  X(vkDestroyInstance) \
  X(vkDestroyPipeline) \
  X(vkDestroyPipelineLayout) \
  X(vkDestroyQueryPool) \
  X(vkDestroyShaderModule) \
  X(vkDeviceWaitIdle) \
  X(vkEndCommandBuffer) \
  X(vkEnumerateDeviceExtensionProperties) \
  X(vkEnumerateInstanceLayerProperties) \
  X(vkEnumerateInstanceVersion) \
  X(vkEnumeratePhysicalDevices) \
  X(vkFreeCommandBuffers) \
  X(vkFreeMemory) \
  X(vkGetBufferDeviceAddress) \
  X(vkGetBufferMemoryRequirements) \
  X(vkGetDeviceQueue) \
  X(vkGetPhysicalDeviceFeatures2) \
  X(vkGetPhysicalDeviceMemoryProperties) \
  X(vkGetPhysicalDeviceProperties2) \
  X(vkGetPhysicalDeviceQueueFamilyProperties) \
  X(vkGetQueryPoolResults) \
  X(vkMapMemory) \
  X(vkQueueSubmit) \
  X(vkResetCommandBuffer) \
  X(vkResetFences) \
  X(vkUnmapMemory) \
  X(vkUpdateDescriptorSets) \
  X(vkWaitForFences) \
  /* end */

namespace vkattn {

#define VKATTN_DECLARE_VULKAN_FUNCTION(name) extern PFN_##name name;
VKATTN_VULKAN_FUNCTIONS(VKATTN_DECLARE_VULKAN_FUNCTION)
#undef VKATTN_DECLARE_VULKAN_FUNCTION

namespace vk {
// Opens the loader ($VKATTN_VULKAN_LIBRARY, else libvulkan.so.1) and resolves
// every function above, once; throws Error(no_device) naming the Debian
// package when it cannot.
void load_vulkan();
// The same through the host's vkGetInstanceProcAddr (its instance for the
// instance-level functions); null: load_vulkan(). When vkattn is loaded
// already, the host's loader must be the one in use (Error otherwise).
void load_vulkan(PFN_vkGetInstanceProcAddr host, VkInstance instance);
}  // namespace vk

}  // namespace vkattn

// VK_KHR_cooperative_matrix and VK_NV_cooperative_matrix2 feature structures,
// declared here because the Vulkan headers of the oldest supported systems
// (Debian 12: 1.3.239) predate them. Layouts and values are the registry's.
#pragma once

#include "vk/volk.hpp"

namespace vkattn::vk {

inline constexpr const char* kKhrCooperativeMatrixExtension = "VK_KHR_cooperative_matrix";
inline constexpr const char* kNvCooperativeMatrix2Extension = "VK_NV_cooperative_matrix2";
inline constexpr auto kStructureKhrCooperativeMatrixFeatures = static_cast<VkStructureType>(1000506000);
inline constexpr auto kStructureNvCooperativeMatrix2Features = static_cast<VkStructureType>(1000593000);
inline constexpr auto kStructureNvCooperativeMatrix2Properties = static_cast<VkStructureType>(1000593002);

struct KhrCooperativeMatrixFeatures {
  VkStructureType sType = kStructureKhrCooperativeMatrixFeatures;
  void* pNext = nullptr;
  VkBool32 cooperativeMatrix = VK_FALSE;
  VkBool32 cooperativeMatrixRobustBufferAccess = VK_FALSE;
};

struct NvCooperativeMatrix2Features {
  VkStructureType sType = kStructureNvCooperativeMatrix2Features;
  void* pNext = nullptr;
  VkBool32 cooperativeMatrixWorkgroupScope = VK_FALSE;
  VkBool32 cooperativeMatrixFlexibleDimensions = VK_FALSE;
  VkBool32 cooperativeMatrixReductions = VK_FALSE;
  VkBool32 cooperativeMatrixConversions = VK_FALSE;
  VkBool32 cooperativeMatrixPerElementOperations = VK_FALSE;
  VkBool32 cooperativeMatrixTensorAddressing = VK_FALSE;
  VkBool32 cooperativeMatrixBlockLoads = VK_FALSE;
};

struct NvCooperativeMatrix2Properties {
  VkStructureType sType = kStructureNvCooperativeMatrix2Properties;
  void* pNext = nullptr;
  uint32_t cooperativeMatrixWorkgroupScopeMaxWorkgroupSize = 0;
  uint32_t cooperativeMatrixFlexibleDimensionsMaxDimension = 0;
  uint32_t cooperativeMatrixWorkgroupScopeReservedSharedMemory = 0;
};

// What flash_workgroup.comp uses of the two extensions.
inline bool workgroup_matrices_usable(const KhrCooperativeMatrixFeatures& khr, const NvCooperativeMatrix2Features& nv) {
  return khr.cooperativeMatrix && nv.cooperativeMatrixWorkgroupScope && nv.cooperativeMatrixFlexibleDimensions &&
         nv.cooperativeMatrixReductions && nv.cooperativeMatrixConversions &&
         nv.cooperativeMatrixPerElementOperations && nv.cooperativeMatrixTensorAddressing;
}

}  // namespace vkattn::vk

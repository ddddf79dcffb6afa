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

// The VK_NV_cooperative_matrix2 features flash_workgroup.comp uses (with
// VK_KHR_cooperative_matrix's cooperativeMatrix): what caps require and what
// the runtime enables, listed once.
inline constexpr VkBool32 NvCooperativeMatrix2Features::*kWorkgroupMatrixFeatures[] = {
    &NvCooperativeMatrix2Features::cooperativeMatrixWorkgroupScope,
    &NvCooperativeMatrix2Features::cooperativeMatrixFlexibleDimensions,
    &NvCooperativeMatrix2Features::cooperativeMatrixReductions,
    &NvCooperativeMatrix2Features::cooperativeMatrixConversions,
    &NvCooperativeMatrix2Features::cooperativeMatrixPerElementOperations,
    &NvCooperativeMatrix2Features::cooperativeMatrixTensorAddressing,
};

inline bool workgroup_matrices_usable(const KhrCooperativeMatrixFeatures& khr, const NvCooperativeMatrix2Features& nv) {
  if (!khr.cooperativeMatrix) return false;
  for (auto feature : kWorkgroupMatrixFeatures)
    if (!(nv.*feature)) return false;
  return true;
}

inline void enable_workgroup_matrices(KhrCooperativeMatrixFeatures& khr, NvCooperativeMatrix2Features& nv) {
  khr.cooperativeMatrix = VK_TRUE;
  for (auto feature : kWorkgroupMatrixFeatures) nv.*feature = VK_TRUE;
}

}  // namespace vkattn::vk

#include "vk/caps_query.hpp"
#include "vk/cooperative_matrix2.hpp"
#include "vk/volk.hpp"

#include <fmt/format.h>

#include <cstring>

namespace vkattn::vk {

namespace {

std::string device_type_name(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
    default: return "other";
  }
}

std::string vendor_name(uint32_t id) {
  switch (id) {
    case 0x10DE: return "nvidia";
    case 0x1002: return "amd";
    case 0x8086: return "intel";
    case 0x106B: return "apple";
    case 0x13B5: return "arm";
    case 0x5143: return "qualcomm";
    case 0x10005: return "mesa";
    default: return "unknown";
  }
}

std::string component_name(VkComponentTypeNV t) {
  switch (t) {
    case VK_COMPONENT_TYPE_FLOAT16_NV: return "f16";
    case VK_COMPONENT_TYPE_FLOAT32_NV: return "f32";
    case VK_COMPONENT_TYPE_FLOAT64_NV: return "f64";
    case VK_COMPONENT_TYPE_SINT8_NV: return "i8";
    case VK_COMPONENT_TYPE_SINT32_NV: return "i32";
    case VK_COMPONENT_TYPE_UINT8_NV: return "u8";
    case VK_COMPONENT_TYPE_UINT32_NV: return "u32";
    default: return fmt::format("type{}", static_cast<int>(t));
  }
}

}  // namespace

bool has_device_extension(VkPhysicalDevice pd, const char* name) {
  uint32_t n = 0;
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> exts(n);
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, exts.data());
  for (auto& e : exts)
    if (std::strcmp(e.extensionName, name) == 0) return true;
  return false;
}

DeviceCaps query_caps(VkInstance instance, VkPhysicalDevice pd) {
  DeviceCaps c;
  const bool has_sm_builtins = has_device_extension(pd, VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME);
  const bool has_coop = has_device_extension(pd, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
  const bool has_executable_properties = has_device_extension(pd, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
  const bool has_coop2 = has_device_extension(pd, kKhrCooperativeMatrixExtension) &&
                         has_device_extension(pd, kNvCooperativeMatrix2Extension);

  VkPhysicalDeviceShaderSMBuiltinsPropertiesNV sm{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV};
  VkPhysicalDeviceSubgroupSizeControlProperties sgc{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES};
  VkPhysicalDeviceSubgroupProperties sg{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES, &sgc};
  VkPhysicalDeviceDriverProperties drv{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES, &sg};
  VkPhysicalDeviceMaintenance3Properties m3{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES, &drv};
  if (has_sm_builtins) sm.pNext = &m3;
  NvCooperativeMatrix2Properties coop2p;
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                    has_sm_builtins ? static_cast<void*>(&sm) : static_cast<void*>(&m3)};
  if (has_coop2) {
    coop2p.pNext = props.pNext;
    props.pNext = &coop2p;
  }
  vkGetPhysicalDeviceProperties2(pd, &props);
  const auto& p = props.properties;
  c.name = p.deviceName;
  c.type = device_type_name(p.deviceType);
  c.vendor_id = p.vendorID;
  c.device_id = p.deviceID;
  c.vendor = vendor_name(p.vendorID);
  c.api_version = p.apiVersion;
  c.driver_name = drv.driverName;
  c.driver_info = drv.driverInfo;

  const bool compute_subgroups = (sg.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0;
  c.subgroup_size = sg.subgroupSize;
  c.min_subgroup_size = sgc.minSubgroupSize ? sgc.minSubgroupSize : sg.subgroupSize;
  c.max_subgroup_size = sgc.maxSubgroupSize ? sgc.maxSubgroupSize : sg.subgroupSize;
  c.subgroup_basic = compute_subgroups && (sg.supportedOperations & VK_SUBGROUP_FEATURE_BASIC_BIT);
  c.subgroup_arithmetic = compute_subgroups && (sg.supportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT);
  c.subgroup_shuffle = compute_subgroups && (sg.supportedOperations & VK_SUBGROUP_FEATURE_SHUFFLE_BIT);
  c.subgroup_ballot = compute_subgroups && (sg.supportedOperations & VK_SUBGROUP_FEATURE_BALLOT_BIT);

  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR execf{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  VkPhysicalDeviceSubgroupSizeControlFeatures sgcf{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES,
                                                   has_executable_properties ? &execf : nullptr};
  VkPhysicalDeviceCooperativeMatrixFeaturesNV coopf{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV,
                                                    &sgcf};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                       has_coop ? static_cast<void*>(&coopf) : static_cast<void*>(&sgcf)};
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, &f12};
  VkPhysicalDeviceFeatures2 feats{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f11};
  KhrCooperativeMatrixFeatures coopkf;
  NvCooperativeMatrix2Features coop2f;
  if (has_coop2) {
    coop2f.pNext = &coopkf;
    coopkf.pNext = feats.pNext;
    feats.pNext = &coop2f;
  }
  vkGetPhysicalDeviceFeatures2(pd, &feats);
  c.shader_float16 = f12.shaderFloat16;
  c.shader_int8 = f12.shaderInt8;
  c.shader_int16 = feats.features.shaderInt16;
  c.storage_16bit = f11.storageBuffer16BitAccess;
  c.storage_8bit = f12.storageBuffer8BitAccess;
  c.buffer_device_address = f12.bufferDeviceAddress;
  c.pipeline_executable_info = has_executable_properties && execf.pipelineExecutableInfo;
  c.cooperative_matrix2_nv = has_coop2 && workgroup_matrices_usable(coopkf, coop2f) && f12.vulkanMemoryModel &&
                             f12.vulkanMemoryModelDeviceScope && f11.storageBuffer16BitAccess && f12.shaderFloat16;
  c.cooperative_matrix2_max_workgroup = c.cooperative_matrix2_nv ? coop2p.cooperativeMatrixWorkgroupScopeMaxWorkgroupSize : 0;
  c.subgroup_size_control = sgcf.subgroupSizeControl && sgcf.computeFullSubgroups &&
                            (sgc.requiredSubgroupSizeStages & VK_SHADER_STAGE_COMPUTE_BIT);

  c.max_shared_memory_bytes = p.limits.maxComputeSharedMemorySize;
  c.max_workgroup_invocations = p.limits.maxComputeWorkGroupInvocations;
  for (int i = 0; i < 3; ++i) {
    c.max_workgroup_size[i] = p.limits.maxComputeWorkGroupSize[i];
    c.max_workgroup_count[i] = p.limits.maxComputeWorkGroupCount[i];
  }
  c.max_storage_buffer_range = p.limits.maxStorageBufferRange;
  c.min_storage_buffer_offset_alignment = static_cast<uint32_t>(p.limits.minStorageBufferOffsetAlignment);
  c.max_allocation_bytes = m3.maxMemoryAllocationSize;
  c.max_push_constants_bytes = p.limits.maxPushConstantsSize;
  c.compute_units = has_sm_builtins ? sm.shaderSMCount : 0;
  c.timestamp_period_ns = p.limits.timestampPeriod;

  uint32_t nq = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, nullptr);
  std::vector<VkQueueFamilyProperties> qs(nq);
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, qs.data());
  for (auto& q : qs)
    if ((q.queueFlags & VK_QUEUE_COMPUTE_BIT) && q.timestampValidBits > 0) c.timestamps = true;

  VkPhysicalDeviceMemoryProperties mem;
  vkGetPhysicalDeviceMemoryProperties(pd, &mem);
  for (uint32_t i = 0; i < mem.memoryHeapCount; ++i)
    if (mem.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) c.device_local_bytes += mem.memoryHeaps[i].size;

  if (has_coop && coopf.cooperativeMatrix) {
    auto get = reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV>(
        vkGetInstanceProcAddr(instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV"));
    if (get) {
      uint32_t n = 0;
      get(pd, &n, nullptr);
      std::vector<VkCooperativeMatrixPropertiesNV> shapes(n, {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV});
      get(pd, &n, shapes.data());
      c.cooperative_matrix_nv = n > 0;
      for (auto& s : shapes) {
        if (s.scope != VK_SCOPE_SUBGROUP_NV) continue;
        c.cooperative_matrix_shapes.push_back({s.MSize, s.NSize, s.KSize, component_name(s.AType),
                                               component_name(s.BType), component_name(s.CType),
                                               component_name(s.DType)});
      }
    }
  }
  return c;
}

}  // namespace vkattn::vk

// Reads a physical device's capabilities into DeviceCaps, once.
#pragma once

#include <vulkan/vulkan.h>

#include <string>
#include <vector>

#include "vkattn/caps.hpp"

namespace vkattn::vk {

bool has_device_extension(VkPhysicalDevice pd, const char* name);
DeviceCaps query_caps(VkInstance instance, VkPhysicalDevice pd);

}  // namespace vkattn::vk

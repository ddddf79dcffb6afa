// VkResult to vkattn::Error, with what was being done.
#pragma once

#include <vulkan/vulkan.h>

#include <string_view>

namespace vkattn::vk {

std::string_view result_name(VkResult r);
// Throws Error (out_of_memory, device_lost or vulkan) unless r is VK_SUCCESS.
void check(VkResult r, std::string_view doing);

}  // namespace vkattn::vk

// Vulkan entry points through volk. Instance-level functions are volk's
// process-wide pointers (one loader per process: the default one, or a host's
// vkGetInstanceProcAddr, ExternalDevice::get_instance_proc_addr); device-level
// functions are called through each Runtime's own VolkDeviceTable, so two
// contexts on two devices each call their own driver's entry points.
//
// volk_names.h (generated from volk.h, cmake/Volk.cmake) renames every symbol
// volk defines (vkCreateInstance, volkInitialize, ...) to vkattn_volk_*, so a
// static libvkattn never defines a Vulkan or volk name that would clash with
// libvulkan or with a host's own volk. Library sources only: they compile with
// VK_NO_PROTOTYPES, which volk requires.
#pragma once

// clang-format off
#include "volk_names.h"
#include <volk.h>
// clang-format on

namespace vkattn::vk {
// Initialises volk with the loader ($VKATTN_VULKAN_LIBRARY, else the system's
// libvulkan.so.1), once; throws Error(no_device) naming the Debian package
// when there is none.
void load_vulkan();
// The same through the host's vkGetInstanceProcAddr; null: load_vulkan().
// When vkattn is loaded already, the host's loader must be the one in use
// (Error otherwise).
void load_vulkan(PFN_vkGetInstanceProcAddr host);
// Resolves the instance-level functions through `instance`, the first time
// only: the loader's instance-level entry points are trampolines that
// dispatch on their handle, so they serve every instance of that loader.
void load_instance_functions(VkInstance instance);
}  // namespace vkattn::vk

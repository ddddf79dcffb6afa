// A fault-injection hook in the Vulkan layer: makes the Nth call at a site
// fail with a chosen VkResult (out of device memory, out of host memory,
// device lost) before it reaches the driver, so every error path can be run
// and tested on any device. Off unless armed; one armed fault at a time.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <string_view>

namespace vkattn::vk {

enum class FaultSite : uint8_t { allocation, pipeline_creation, submit, fence_wait };
std::string_view to_string(FaultSite site);

// The `nth` call (1 = the next one) at `site` from now returns `result`.
void arm_fault(FaultSite site, uint32_t nth, VkResult result);
void disarm_faults();
// True once the armed fault has been returned.
bool fault_fired();

// Called at each site before the real Vulkan call: the injected result, or
// VK_SUCCESS when the real call should run.
VkResult injected_fault(FaultSite site);

}  // namespace vkattn::vk

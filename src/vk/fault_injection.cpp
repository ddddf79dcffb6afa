#include "vk/fault_injection.hpp"

#include <mutex>

namespace vkattn::vk {

namespace {

struct Armed {
  bool armed = false;
  bool fired = false;
  FaultSite site = FaultSite::allocation;
  uint32_t remaining = 0;  // calls at `site` until the fault
  VkResult result = VK_SUCCESS;
};

std::mutex& fault_mutex() {
  static std::mutex m;
  return m;
}
Armed& armed() {
  static Armed a;
  return a;
}

}  // namespace

std::string_view to_string(FaultSite site) {
  switch (site) {
    case FaultSite::allocation: return "allocation";
    case FaultSite::pipeline_creation: return "pipeline creation";
    case FaultSite::submit: return "submit";
    case FaultSite::fence_wait: return "fence wait";
  }
  return "?";
}

void arm_fault(FaultSite site, uint32_t nth, VkResult result) {
  std::lock_guard lock(fault_mutex());
  armed() = {nth > 0, false, site, nth, result};
}

void disarm_faults() {
  std::lock_guard lock(fault_mutex());
  armed() = {};
}

bool fault_fired() {
  std::lock_guard lock(fault_mutex());
  return armed().fired;
}

VkResult injected_fault(FaultSite site) {
  std::lock_guard lock(fault_mutex());
  Armed& a = armed();
  if (!a.armed || a.site != site || --a.remaining > 0) return VK_SUCCESS;
  a.armed = false;
  a.fired = true;
  return a.result;
}

}  // namespace vkattn::vk

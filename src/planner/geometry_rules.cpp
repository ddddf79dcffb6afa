#include "planner/geometry_rules.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace vkattn::planner {

uint32_t floor_pow2(uint32_t x) {
  uint32_t p = 1;
  while (p <= x / 2) p *= 2;  // not p * 2 <= x: that wraps to 0 for x >= 2^31 and never ends
  return x == 0 ? 0 : p;
}

uint32_t ceil_pow2(uint32_t x) {
  uint32_t p = 1;
  while (p < x && p < (1u << 31)) p *= 2;
  return p;
}

uint32_t largest_divisor_at_most(uint32_t n, uint32_t cap) {
  for (uint32_t d = std::min(n, cap); d > 1; --d)
    if (n % d == 0) return d;
  return 1;
}

uint32_t workgroups_per_compute_unit(const DeviceCaps& caps, uint32_t shared_bytes, uint32_t max_per_unit) {
  const uint32_t by_shared = shared_bytes ? caps.max_shared_memory_bytes / shared_bytes : max_per_unit;
  return std::clamp(by_shared, 1u, std::max(1u, max_per_unit));
}

std::string require_full_subgroups(const DeviceCaps& caps, uint32_t workgroup_size, uint32_t& required_size) {
  required_size = 0;
  if (caps.subgroup_size == 0 || workgroup_size % caps.subgroup_size != 0)
    return fmt::format("needs a workgroup of whole subgroups; subgroup size {} does not divide {}",
                       caps.subgroup_size, workgroup_size);
  // Full subgroups of the reported size (32 on NVIDIA, 64 on AMD wave64, 8 on lavapipe).
  if (caps.subgroup_size_control) required_size = caps.subgroup_size;
  else if (caps.min_subgroup_size != caps.max_subgroup_size)
    return "needs a fixed subgroup size (varying sizes without subgroup size control)";
  return "";
}

}  // namespace vkattn::planner

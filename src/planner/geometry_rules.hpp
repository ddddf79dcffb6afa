// Device rules every planner applies when it sizes a workgroup.
#pragma once

#include <cstdint>
#include <string>

#include "vkattn/caps.hpp"

namespace vkattn::planner {

// Largest power of two <= x (0 for 0).
uint32_t floor_pow2(uint32_t x);
// Smallest power of two >= x (1 for 0).
uint32_t ceil_pow2(uint32_t x);
// Largest divisor of n that is <= cap (at least 1).
uint32_t largest_divisor_at_most(uint32_t n, uint32_t cap);

// How many workgroups of `shared_bytes` share one compute unit, at most
// `max_per_unit` (what the kernel's registers allow). Measured on the H200
// (2026-12-04, decode_stream at 206-208 registers): two workgroups of 20.8 or
// 21.9 KB ran on one unit, two of 30 KB or three of 20.8 KB did not, with
// registers far from the limit, so a unit holds about one
// max_shared_memory_bytes of workgroups in all.
uint32_t workgroups_per_compute_unit(const DeviceCaps& caps, uint32_t shared_bytes, uint32_t max_per_unit);

// A subgroup kernel needs whole subgroups of one known size: gl_SubgroupID *
// size must cover the workgroup. Returns "" and sets `required_size` (the size
// to request, 0 when the device's size is fixed anyway), or the reason the
// device cannot run it.
std::string require_full_subgroups(const DeviceCaps& caps, uint32_t workgroup_size, uint32_t& required_size);

}  // namespace vkattn::planner

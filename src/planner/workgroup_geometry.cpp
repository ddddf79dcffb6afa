// Geometry of the workgroup-matrix flash engine (workgroup_geometry.hpp).
#include <fmt/format.h>

#include <algorithm>

#include "planner/fragment_geometry.hpp"
#include "planner/geometry_rules.hpp"
#include "planner/workgroup_geometry.hpp"
#include "shaders/flash_interface.h"

namespace vkattn::planner {

namespace {

// Set by cmake/Library.cmake where the GL_NV_cooperative_matrix2 modules are
// built (the plain-GLSL build always is).
#ifdef VKATTN_COOPMAT2_MODULES
constexpr bool kCoopmat2ModulesBuilt = true;
#else
constexpr bool kCoopmat2ModulesBuilt = false;
#endif

// Two warps per 16 query rows: the driver spreads each BR x TK and BR x D
// product over them. The emulated build takes 8 invocations per row:
// lavapipe keeps each invocation's element arrays in memory, and at D256
// (16 rows, 16 keys) 2 per row took one run 15.8 s against 13.7 ms at 8.
constexpr uint32_t kInvocationsPerRow = 2;
constexpr uint32_t kEmulatedInvocationsPerRow = 8;
// 64 rows of 64 keys up to D128, 16 keys past it. H200, 2026-12-07, causal
// S4096 H32/8: D128 1.065 ms (64 keys) against 1.171 (32) and 1.554 (16),
// and 1.405 with 32 rows of 32; D64 0.645 against 0.657 (32 keys); D256
// 3.602 (16 keys) against 4.320 (32) and 4.108 (64).
constexpr uint32_t kWideHeadMaxTileKeys = 16;

}  // namespace

GeometryOrReason workgroup_geometry(const WorkgroupMatrixLimits& limits, const DeviceCaps& caps, uint32_t head_dim,
                                    uint32_t rows, uint32_t tile_keys) {
  auto no = [](std::string why) { return GeometryOrReason{std::nullopt, std::move(why)}; };
  const bool real = limits.cooperative_matrix;
  if (real && !kCoopmat2ModulesBuilt)
    return no("needs module 'flash_workgroup', which this build lacks (a glslang that compiles "
              "GL_NV_cooperative_matrix2: cmake -DVKATTN_GLSLANG_COOPMAT2=...)");
  TextGeometry g;
  if (real) {
    if (!caps.cooperative_matrix2_nv)
      return no("needs VK_NV_cooperative_matrix2 (workgroup scope, flexible dimensions, reductions, conversions, "
                "element operations, tensor addressing) and the Vulkan memory model, device has none");
    g.required_subgroup_size = tensor_core_subgroup_size(caps);
  }
  const uint32_t padded = FLASH_PADDED_DIM(head_dim);
  g.q_pos = rows ? rows : limits.target_rows;
  g.tile_keys = tile_keys ? tile_keys
                          : std::min(limits.max_tile_keys, padded > 128 ? kWideHeadMaxTileKeys : limits.max_tile_keys);
  g.head_group = 1;
  g.workgroup_size = g.q_pos * (real ? kInvocationsPerRow : kEmulatedInvocationsPerRow);
  const uint32_t most =
      real ? std::min(caps.cooperative_matrix2_max_workgroup, caps.max_workgroup_invocations) : caps.max_workgroup_invocations;
  if (g.workgroup_size > most)
    return no(fmt::format("needs a workgroup of {} invocations for {} rows, device allows {}", g.workgroup_size,
                          g.q_pos, most));
  if (!real) {
    // Each invocation holds an equal share of every matrix (FLASH_WG_EMULATED_POOL_FLOATS).
    for (uint32_t elems : {g.q_pos * padded, padded * g.tile_keys, g.q_pos * g.tile_keys})
      if (elems % g.workgroup_size != 0)
        return no(fmt::format("needs matrices whose elements divide among {} invocations ({} rows, {} keys, head_dim "
                              "{} padded to {})",
                              g.workgroup_size, g.q_pos, g.tile_keys, head_dim, padded));
    g.shared_bytes = 4 * FLASH_WG_EMULATED_POOL_FLOATS(g.q_pos, padded, g.tile_keys);
    if (g.shared_bytes > caps.max_shared_memory_bytes)
      return no(fmt::format("needs {} bytes of shared memory (head_dim {}, {} rows, {} keys), device has {}",
                            g.shared_bytes, head_dim, g.q_pos, g.tile_keys, caps.max_shared_memory_bytes));
  }
  return {g, ""};
}

GeometryOrReason workgroup_geometry(const TextVariant& v, const DeviceCaps& caps, const TextShape& s, uint32_t rows,
                                    uint32_t tile_keys) {
  auto no = [](std::string why) { return GeometryOrReason{std::nullopt, std::move(why)}; };
  if (!s.contiguous) return no("needs contiguous K/V (ring, paged and tiered caches take the other rows)");
  if (s.kv_by_address) return no("needs K/V within one storage-buffer binding");
  if (s.out != DType::f16 && s.out != DType::f32)
    return no(fmt::format("writes f16 or f32 output, call asks for {}", to_string(s.out)));
  return workgroup_geometry(WorkgroupMatrixLimits{v.needs_cooperative_matrix, v.target_rows, v.max_tile_keys}, caps,
                            s.head_dim, rows, tile_keys);
}

}  // namespace vkattn::planner

// Workgroup geometry of the workgroup-matrix engine (flash_workgroup.comp):
// query rows, key tile and workgroup size, and what the device and call must offer.
#pragma once

#include <cstdint>

#include "planner/text_planner.hpp"

namespace vkattn::planner {

// The most query rows a workgroup may own (tuning override).
inline constexpr uint32_t kMaxWorkgroupMatrixRows = 128;

// What a row of the engine (text or vision) asks of it: workgroup-scope
// matrices of VK_NV_cooperative_matrix2 or their plain-GLSL build, and the
// query rows and most keys per workgroup.
struct WorkgroupMatrixLimits {
  bool cooperative_matrix;
  uint32_t target_rows, max_tile_keys;
};

// Geometry for head dim `head_dim` (a multiple of 8, padded to 16 in the
// matrices), or why it cannot run; `rows` and `tile_keys` > 0 force them (tuning).
GeometryOrReason workgroup_geometry(const WorkgroupMatrixLimits& limits, const DeviceCaps& caps, uint32_t head_dim,
                                    uint32_t rows = 0, uint32_t tile_keys = 0);
// The same for a text row and call: contiguous f16 K/V within one binding, f16 or f32 output.
GeometryOrReason workgroup_geometry(const TextVariant& v, const DeviceCaps& caps, const TextShape& s,
                                    uint32_t rows = 0, uint32_t tile_keys = 0);

}  // namespace vkattn::planner

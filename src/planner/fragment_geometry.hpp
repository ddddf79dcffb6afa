// Workgroup geometry of the flash_fragments engine (flash_coopmat.comp): warps,
// key tile and shared memory, sized from the device's caps.
#pragma once

#include <cstdint>
#include <string>

#include "planner/text_planner.hpp"

namespace vkattn::planner {

// Bytes flash_coopmat.comp declares in shared memory for `rows` query rows,
// head dim `d` and `kv_stages` buffers of `tile_keys` keys (mirrors its
// `shared` arrays).
uint32_t fragment_shared_bytes(uint32_t rows, uint32_t d, uint32_t tile_keys, uint32_t kv_stages);

// Why the device cannot run the tensor-core fragment layer at all (empty: it
// can), its accumulator layout aside: the layout probe, which needs the same
// to run, decides that (DeviceCaps::coop_accumulator_quad).
std::string tensor_core_fragments_missing(const DeviceCaps& caps);
// The subgroup size tensor-core fragment pipelines pin (0: none; the
// device's own is FLASH_WARP). For a device tensor_core_fragments_missing accepts.
uint32_t tensor_core_subgroup_size(const DeviceCaps& caps);

// What a row of the engine (text or vision) asks of it: tensor cores or the
// plain-GLSL fragments, and the most query rows and keys per workgroup to try.
struct FragmentLimits {
  bool cooperative_matrix;
  uint32_t target_rows, max_tile_keys, min_tile_keys;
};

// Geometry for head dim `head_dim` (a multiple of 8; fragments pad it to 16)
// with `gqa` query heads per KV head, or why it cannot run. `tile_keys` > 0
// forces the key tile (a tuning override); otherwise the largest that fits.
GeometryOrReason fragment_geometry(const FragmentLimits& limits, const DeviceCaps& caps, uint32_t head_dim,
                                   uint32_t gqa, uint32_t tile_keys = 0);
// The same for a text row and call.
GeometryOrReason fragment_geometry(const TextVariant& v, const DeviceCaps& caps, const TextShape& s,
                                uint32_t tile_keys = 0);

}  // namespace vkattn::planner

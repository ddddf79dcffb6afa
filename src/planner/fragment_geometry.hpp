// Workgroup geometry of the flash_fragments engine (flash_coopmat.comp): warps,
// key tile and shared memory, sized from the device's caps.
#pragma once

#include <cstdint>

#include "planner/text_planner.hpp"

namespace vkattn::planner {

// Bytes flash_coopmat.comp declares in shared memory for `rows` query rows,
// head dim `d` and `tile_keys` keys (mirrors its `shared` arrays).
uint32_t fragment_shared_bytes(uint32_t rows, uint32_t d, uint32_t tile_keys);

// Geometry of a flash_fragments row, or why it cannot run. `tile_keys` > 0
// forces the key tile (a tuning override); otherwise the largest that fits.
GeometryOrReason fragment_geometry(const TextVariant& v, const DeviceCaps& caps, const TextShape& s,
                                uint32_t tile_keys = 0);

}  // namespace vkattn::planner

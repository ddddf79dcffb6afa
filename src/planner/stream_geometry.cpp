// Geometry of decode_stream (text_decode_stream.comp): warps per workgroup,
// query heads per workgroup (the 8 columns of its fragments) and the split grid.
#include <fmt/format.h>

#include <algorithm>

#include "planner/fragment_geometry.hpp"
#include "planner/geometry_rules.hpp"
#include "planner/split_grid.hpp"
#include "planner/text_planner.hpp"
#include "shaders/stream_interface.h"

namespace vkattn::planner {

namespace {

// Split grid: one wave of the workgroups that share a compute unit, each warp
// walking a long run of tiles. A workgroup past the wave runs after it and
// costs a whole walk (H200, 2026-12-03, B1 H32/8 D128 L32768 with 39 KB
// workgroups: 16 splits, 128 workgroups, 0.053 ms; 17 splits 0.080). How many
// share a unit is set by their shared memory (workgroups_per_compute_unit)
// and by the register file (64 K registers a unit on NVIDIA): 16 warps of
// 115 registers where a warp holds 64 columns of the head dim, 8 of the
// 201-225 it takes at 128 (H200 and H100, --pipeline-stats). Short contexts
// still split down to one tile per warp: B1 L1024 16 splits 0.0155 ms
// against 2 splits 0.0219.
uint32_t max_warps_per_compute_unit(uint32_t warp_dim) { return warp_dim <= 64 ? 16 : 8; }
constexpr uint32_t kMinTilesPerWarp = 1;  // per tile walker (one warp, or the two that share tiles)
constexpr uint32_t kStreamKeysPerSplitUnknownDevice = 1024;
// The most splits a second workgroup per compute unit may bring on any walk,
// and the tiles each walker must walk for it to bring more (below).
constexpr uint32_t kMostSplitsForASecondWorkgroup = 16;
constexpr uint32_t kMinTilesPerWalkerPastThatBound = 4;

// A short walk on few KV heads: one tile per walker leaves three quarters of
// the compute units idle when the workgroups are as large as shared memory
// allows, and at 128 columns a warp the warps of one workgroup then queue
// behind each other on their unit. Workgroups of kShortWalkWarps reach twice
// the units (H100, 2026-12-06, two rounds: B1 H8/1 D128 L4096, 32 workgroups
// of 8 warps 0.0148 ms, 64 of 4 with the reduce 0.0120; B1 H8/1 D128 L32768,
// which fills the units either way, 0.0213 against 0.0203; at D64 0.0097
// against 0.0096; B1 H32/8 D128 L32768 with 4 warps 1.19x slower).
// Only at this head dim (one warp per tile): D64 measured equal, D256 slower.
constexpr uint32_t kShortWalkWarps = 4;
constexpr uint32_t kShortWalkHeadDim = 128;
constexpr uint32_t kShortWalkUnitsPerWorkgroup = 4;  // the grid reaches a quarter of the units or fewer
static_assert(STREAM_DIM_SPLIT(kShortWalkHeadDim) == 1, "a tile walker is one warp at the short-walk head dim");
bool short_walk_fills_few_units(const DeviceCaps& caps, const TextShape& s, uint64_t per_split, uint32_t warps) {
  if (s.head_dim != kShortWalkHeadDim || warps <= kShortWalkWarps || !caps.compute_units) return false;
  // Splits that give each walker one tile, and the workgroups they make.
  const uint64_t tiles = (s.kv_len_max() + STREAM_KEYS - 1) / STREAM_KEYS;
  const uint64_t splits = std::max<uint64_t>(1, tiles / warps);
  return per_split * splits * kShortWalkUnitsPerWorkgroup <= caps.compute_units;
}

}  // namespace

GeometryOrReason stream_geometry(const TextVariant& v, const DeviceCaps& caps, const TextShape& s) {
  auto no = [](std::string why) { return GeometryOrReason{std::nullopt, std::move(why)}; };
  // Past STREAM_MAX_WARP_DIM two warps share each tile, each with half of the head dim.
  const uint32_t dim_split = STREAM_DIM_SPLIT(s.head_dim);
  if (s.head_dim % (FLASH_FRAG * dim_split) != 0)
    return no(fmt::format("needs head_dim a multiple of {}, got {}", FLASH_FRAG * dim_split, s.head_dim));
  TextGeometry g;
  if (v.needs_cooperative_matrix) {
    if (std::string missing = tensor_core_fragments_missing(caps); !missing.empty()) return no(std::move(missing));
    if (!caps.has_coop_shape(FLASH_FRAG, STREAM_HEADS, FLASH_FRAG, "f16", "f32"))
      return no(fmt::format("needs VK_NV_cooperative_matrix with f16 {}x{}x{} -> f32, device has none", FLASH_FRAG,
                            STREAM_HEADS, FLASH_FRAG));
    if (!caps.coop_accumulator_quad)
      return no("needs the f32 accumulators laid out as mma.m16n8k16's (rows across a quad), device's are not");
    g.required_subgroup_size = tensor_core_subgroup_size(caps);
  }
  g.workgroup_size = std::min(v.workgroup_size, floor_pow2(caps.max_workgroup_invocations)) / FLASH_WARP * FLASH_WARP;
  if (g.workgroup_size == 0)
    return no(fmt::format("needs workgroups of at least {} invocations, device has {}", FLASH_WARP,
                          caps.max_workgroup_invocations));
  // Fewer warps where the staging areas do not fit, one tile walker at a
  // time (D256 on 48 KiB: 4 walkers of 2 warps).
  uint32_t warps = g.workgroup_size / FLASH_WARP / dim_split * dim_split;
  while (warps > dim_split && STREAM_SHARED_BYTES(warps, s.head_dim) > caps.max_shared_memory_bytes)
    warps -= dim_split;
  if (warps < dim_split)
    return no(fmt::format("needs workgroups of at least {} invocations at head_dim {}, device has {}",
                          dim_split * FLASH_WARP, s.head_dim, caps.max_workgroup_invocations));
  const uint32_t gqa = s.num_heads / s.num_kv_heads;
  g.head_group = largest_divisor_at_most(gqa, STREAM_HEADS);
  const uint64_t per_split = uint64_t(s.batch) * s.num_kv_heads * (gqa / g.head_group);
  if (short_walk_fills_few_units(caps, s, per_split, warps)) warps = kShortWalkWarps;
  g.workgroup_size = warps * FLASH_WARP;
  g.shared_bytes = STREAM_SHARED_BYTES(warps, s.head_dim);
  if (g.shared_bytes > caps.max_shared_memory_bytes)
    return no(fmt::format("needs {} bytes of shared memory (head_dim {}, {} warps), device has {}", g.shared_bytes,
                          s.head_dim, warps, caps.max_shared_memory_bytes));
  g.q_pos = 1;
  g.tile_keys = STREAM_KEYS;
  const uint32_t per_compute_unit =
      workgroups_per_compute_unit(caps, g.shared_bytes, max_warps_per_compute_unit(s.head_dim / dim_split) / warps);
  auto splits_at = [&](uint32_t workgroups_per_compute_unit) {
    return device_filling_splits(caps, s, per_split,
                                 {workgroups_per_compute_unit, warps / dim_split * kMinTilesPerWarp * STREAM_KEYS,
                                  kStreamKeysPerSplitUnknownDevice, true});
  };
  // A second workgroup per compute unit doubles the splits. It pays up to
  // kMostSplitsForASecondWorkgroup splits (H100, 2026-12-05, D64 8-warp
  // workgroups: B8 H32/8 L32768 2 -> 4 splits 1.13x, B32-B64 H8/1 L32768
  // 1.08-1.09x, MQA B4 H32/1 1.09x). Past it, only where each walker still
  // walks kMinTilesPerWalkerPastThatBound tiles and the last split merges the
  // partials in one round of loads (H100, same day, --splits: B1 H32/8 D64
  // L32768, 8 tiles a walker, 16 -> 33 splits 0.0365 -> 0.0345 ms; L4096, one
  // tile a walker, 16 -> 32 splits 0.0147 -> 0.0153; B8 H8/1 L32768, two
  // rounds of 16 and one, 0.0362 -> 0.0365); where the reduce dispatch would
  // follow it lost on every walk (B1 H32/8 L32768 0.94x, B1 H8/1 L32768 0.93x).
  g.merge_pool_vec4s = STREAM_SHARED_WORDS(warps, s.head_dim);
  g.splits = splits_at(per_compute_unit);
  const uint64_t walkers = warps / dim_split;
  const bool long_walks = s.kv_len_max() >= uint64_t(g.splits) * walkers * kMinTilesPerWalkerPastThatBound * STREAM_KEYS;
  if (g.splits > kMostSplitsForASecondWorkgroup &&
      !(long_walks && last_split_merges_in_one_round(g, s.head_dim, g.splits)))
    g.splits = splits_at(1);
  return {g, ""};
}

}  // namespace vkattn::planner

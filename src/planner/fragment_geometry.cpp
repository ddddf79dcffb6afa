#include "planner/fragment_geometry.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "planner/geometry_rules.hpp"
#include "planner/split_grid.hpp"
#include "shaders/flash_interface.h"

namespace vkattn::planner {

uint32_t fragment_shared_bytes(uint32_t rows, uint32_t d, uint32_t tile_keys, uint32_t kv_stages) {
  const uint32_t row_words = FLASH_PADDED_DIM(d) / 8 + FLASH_ROW_PAD_WORDS;
  const uint32_t stage_words = 2 * tile_keys * row_words;
  const uint32_t kv_region = std::max(kv_stages * stage_words, rows * row_words);
  const uint32_t scratch_words = rows * FLASH_SCRATCH_STRIDE;
  return (kv_region + scratch_words) * FLASH_WORD_BYTES + kv_stages * tile_keys * FLASH_KEY_STATE_BYTES +
         rows * FLASH_ROW_STATE_BYTES + FLASH_TILE_STATE_BYTES;
}

std::string tensor_core_fragments_missing(const DeviceCaps& caps) {
  if (!caps.cooperative_matrix_nv || !caps.has_coop_shape(FLASH_FRAG, FLASH_FRAG, FLASH_FRAG, "f16", "f32"))
    return "needs VK_NV_cooperative_matrix with f16 16x16x16 -> f32, device has none";
  if (!caps.subgroup_basic || !caps.subgroup_shuffle || !caps.subgroup_arithmetic || !caps.subgroup_ballot)
    return "needs subgroup barriers, shuffles, arithmetic and ballots in compute shaders, device lacks one";
  // A fragment belongs to one subgroup of exactly FLASH_WARP invocations.
  if (caps.min_subgroup_size > FLASH_WARP || caps.max_subgroup_size < FLASH_WARP ||
      (caps.subgroup_size != FLASH_WARP && !caps.subgroup_size_control))
    return fmt::format("needs subgroups of {} invocations, device has {}", FLASH_WARP, caps.subgroup_size);
  return "";
}

uint32_t tensor_core_subgroup_size(const DeviceCaps& caps) { return caps.subgroup_size_control ? FLASH_WARP : 0; }

namespace {

// Decode (split rows): each workgroup is one warp, its 16 rows the query heads
// of one KV head, and many such workgroups share a compute unit; a split walks
// at least 8 tiles so its partial write stays small next to its K/V reads.
constexpr uint32_t kDecodeWorkgroupsPerComputeUnit = 16;
constexpr uint32_t kDecodeMinKeysPerSplit = 128;
constexpr uint32_t kDecodeKeysPerSplitUnknownDevice = 512;

uint32_t largest_divisor_dividing(uint32_t n, uint32_t rows) {
  for (uint32_t d = std::min(n, rows); d > 1; --d)
    if (n % d == 0 && rows % d == 0) return d;
  return 1;
}

}  // namespace

GeometryOrReason fragment_geometry(const TextVariant& v, const DeviceCaps& caps, const TextShape& s,
                                uint32_t tile_keys) {
  const FragmentLimits limits{v.needs_cooperative_matrix, v.target_rows, v.max_tile_keys, v.min_tile_keys};
  const uint32_t gqa = s.num_heads / std::max(1u, s.num_kv_heads);
  GeometryOrReason out = fragment_geometry(limits, caps, s.head_dim, gqa, tile_keys);
  if (out.geometry && v.kind == Kind::split) {
    TextGeometry& g = *out.geometry;
    const uint64_t per_split = uint64_t(s.batch) * s.num_kv_heads * (gqa / g.head_group) *
                               ((uint64_t(s.seq_len) + g.q_pos - 1) / g.q_pos);
    g.splits = device_filling_splits(caps, s, per_split,
                                     {kDecodeWorkgroupsPerComputeUnit, std::max(kDecodeMinKeysPerSplit, g.tile_keys),
                                      kDecodeKeysPerSplitUnknownDevice});
  }
  return out;
}

GeometryOrReason fragment_geometry(const FragmentLimits& v, const DeviceCaps& caps, uint32_t head_dim, uint32_t gqa,
                                   uint32_t tile_keys) {
  auto no = [](std::string why) { return GeometryOrReason{std::nullopt, std::move(why)}; };
  // Fragments pad the head dim to a multiple of FLASH_FRAG; rows are read in 8-element words.
  if (head_dim == 0 || head_dim % 8 != 0) return no(fmt::format("needs head_dim a multiple of 8, got {}", head_dim));
  TextGeometry g;
  if (v.cooperative_matrix) {
    if (std::string missing = tensor_core_fragments_missing(caps); !missing.empty()) return no(std::move(missing));
    if (!caps.coop_accumulator_quad)
      return no("needs the 16x16 f32 accumulator laid out as mma.m16n8k16's (rows across a quad), device's is not");
    g.required_subgroup_size = tensor_core_subgroup_size(caps);
  }
  // Most warps first (more query rows share each K/V tile), then the largest
  // key tile that fits in shared memory: in two buffers, else in one (one
  // buffer of 64 keys beat two of 32 on the H200, S4096 D128 1.018 -> 0.958 ms:
  // half the tiles' softmax reductions and more products per barrier).
  const uint32_t max_rows = std::min(v.target_rows, floor_pow2(caps.max_workgroup_invocations) / FLASH_WARP * FLASH_FRAG);
  for (uint32_t rows = max_rows; rows >= FLASH_FRAG; rows /= 2) {
    const uint32_t wg = rows / FLASH_FRAG * FLASH_WARP;
    for (uint32_t tk = tile_keys ? tile_keys : std::min(v.max_tile_keys, wg); tk >= v.min_tile_keys; tk /= 2) {
      const uint32_t stages = fragment_shared_bytes(rows, head_dim, tk, 2) <= caps.max_shared_memory_bytes ? 2 : 1;
      const uint32_t bytes = fragment_shared_bytes(rows, head_dim, tk, stages);
      if (tk <= wg && bytes <= caps.max_shared_memory_bytes) {
        g.kv_stages = stages;
        g.head_group = largest_divisor_dividing(gqa, rows);
        g.q_pos = rows / g.head_group;
        g.tile_keys = tk;
        g.workgroup_size = wg;
        g.shared_bytes = bytes;
        return {g, ""};
      }
      if (tile_keys) break;
    }
  }
  const uint32_t tk = tile_keys ? tile_keys : v.min_tile_keys;
  return no(fmt::format("needs {} bytes of shared memory (head_dim {}, {} rows, {} keys), device has {}",
                        fragment_shared_bytes(FLASH_FRAG, head_dim, tk, 1), head_dim, FLASH_FRAG, tk,
                        caps.max_shared_memory_bytes));
}

}  // namespace vkattn::planner

// Geometry of decode_flash (text_decode_flash.comp): lane groups per key,
// query heads per workgroup, keys in flight, and the split-KV grid.
#include <fmt/format.h>

#include <algorithm>

#include "planner/geometry_rules.hpp"
#include "planner/split_grid.hpp"
#include "planner/text_planner.hpp"
#include "shaders/text_attention_interface.h"

namespace vkattn::planner {

namespace {

// Accumulator words (16 bytes each) a lane may hold across all its query
// heads. 4 rather than 8 on the H200 (2026-12-03): MQA B4 H32/1 D64 L8192
// 0.051 -> 0.037 ms, H8/1 D128 B32 L32768 0.574 -> 0.446 ms, GQA 32/8 unchanged
// (fewer registers, more workgroups per SM; K/V reread from L2 by the second
// head group).
constexpr uint32_t kMaxAccWordsPerLane = 4;
// Split grid: two workgroups resident per compute unit, two waves, so the last
// wave's tail is short; no split shorter than one step of the workgroup.
constexpr uint32_t kWorkgroupsPerComputeUnit = 4;
constexpr uint32_t kKeysPerSplitUnknownDevice = 512;
// Splits of this many keys or fewer take one wave instead
// (kWorkgroupsPerComputeUnit / 2, rounded down): their fixed cost, the last
// split's merge among them, outweighs a short last wave (H100, 2026-12-06,
// two rounds, B1 L4096: MHA D64 16 splits of 256 keys 0.0200 ms, 8 of 512
// 0.0179; D128 0.0308 against 0.0285; D256 17 splits 0.0555 against 8
// 0.0501; GQA 32/8 D128 f32 66 -> 33 splits 0.0246 against 0.0220, bf16 64
// -> 33 0.0210 against 0.0168). Longer splits were not measured against one
// wave beyond B2 MHA D64 L4096 (9 splits of 455 keys; 4 ran 1.11x faster).
constexpr uint32_t kShortSplitKeys = 256;

}  // namespace

GeometryOrReason flash_geometry(const TextVariant& v, const DeviceCaps& caps, const TextShape& s, TextGeometry g) {
  auto no = [](std::string why) { return GeometryOrReason{std::nullopt, std::move(why)}; };
  if (!caps.subgroup_shuffle) return no("needs subgroup shuffles in compute shaders, device has none");
  const uint32_t sg = caps.subgroup_size;
  g.workgroup_size = std::min(v.workgroup_size, floor_pow2(caps.max_workgroup_invocations));
  if (sg == 0 || g.workgroup_size < sg) return no(fmt::format("needs a workgroup of at least one subgroup ({})", sg));
  std::string why = require_full_subgroups(caps, g.workgroup_size, g.required_subgroup_size);
  if (!why.empty()) return no(why);

  // One key row is split into 16-byte words over a power-of-two group of lanes.
  const uint32_t elems_per_word = s.kv == DType::f32 ? 4 : 8;
  const uint32_t row_words = s.head_dim / elems_per_word;
  g.key_lanes = std::min(sg, ceil_pow2(row_words));
  const uint32_t words_per_lane = (row_words + g.key_lanes - 1) / g.key_lanes;
  if (words_per_lane > kMaxAccWordsPerLane)
    return no(fmt::format("needs head_dim <= {} for subgroup size {}", kMaxAccWordsPerLane * elems_per_word * sg, sg));
  const uint32_t gqa = s.num_heads / s.num_kv_heads;
  g.head_group = largest_divisor_at_most(gqa, std::min(v.target_rows, kMaxAccWordsPerLane / words_per_lane));
  // Shrink the head group, then the workgroup, until the merge fits.
  auto merge_bytes = [&] { return uint32_t(TEXT_FLASH_SHARED_BYTES(g.workgroup_size / sg, g.head_group, s.head_dim)); };
  while (merge_bytes() > caps.max_shared_memory_bytes && g.head_group > 1)
    g.head_group = largest_divisor_at_most(gqa, g.head_group - 1);
  while (merge_bytes() > caps.max_shared_memory_bytes && g.workgroup_size > sg) g.workgroup_size /= 2;
  if (merge_bytes() > caps.max_shared_memory_bytes)
    return no(fmt::format("needs {} bytes of shared memory to merge subgroups, device has {}", merge_bytes(),
                          caps.max_shared_memory_bytes));
  g.shared_bytes = merge_bytes();
  g.merge_pool_vec4s = TEXT_FLASH_MERGE_VEC4S(g.workgroup_size / sg, g.head_group, s.head_dim);
  g.tile_keys = v.max_tile_keys;
  g.acc_chunks = words_per_lane;

  const uint64_t base = uint64_t(s.batch) * s.num_kv_heads * (gqa / g.head_group);
  const uint32_t step = g.workgroup_size / g.key_lanes * g.tile_keys;
  g.splits = device_filling_splits(caps, s, base, {kWorkgroupsPerComputeUnit, step, kKeysPerSplitUnknownDevice});
  if (caps.compute_units && s.kv_len_max() <= uint64_t(g.splits) * kShortSplitKeys) {
    const SplitPolicy one_wave{kWorkgroupsPerComputeUnit / 2, step, kKeysPerSplitUnknownDevice, true};
    g.splits = device_filling_splits(caps, s, base, one_wave);
  }
  // Where rounding the grid up takes the last split's merge past one round of
  // loads and rounding it down does not, down: a few percent fewer workgroups
  // for a merge of one round (B1 with 32 KV heads: 17 splits, two rounds of
  // one load, or 16 in one).
  if (!last_split_merges_in_one_round(g, s.head_dim, g.splits)) {
    const uint32_t down =
        device_filling_splits(caps, s, base, {kWorkgroupsPerComputeUnit, step, kKeysPerSplitUnknownDevice, true});
    if (last_split_merges_in_one_round(g, s.head_dim, down)) g.splits = down;
  }
  return {g, ""};
}

}  // namespace vkattn::planner

// Geometry of decode_flash (text_decode_flash.comp): lane groups per key,
// query heads per workgroup, keys in flight, and the split-KV grid.
#include <fmt/format.h>

#include <algorithm>

#include "ops/dtype_code.hpp"
#include "planner/geometry_rules.hpp"
#include "planner/split_grid.hpp"
#include "planner/text_planner.hpp"
#include "shaders/text_attention_interface.h"

namespace vkattn::planner {

namespace {

// Accumulator words a lane may hold across all its query heads, in K/V words
// of 16 bytes of f16 or f32 (a word of 16 quantized codes counts as two). 4
// rather than 8 on the H200 (2026-12-03): MQA B4 H32/1 D64 L8192
// 0.051 -> 0.037 ms, H8/1 D128 B32 L32768 0.574 -> 0.446 ms, GQA 32/8 unchanged
// (fewer registers, more workgroups per SM; K/V reread from L2 by the second
// head group).
constexpr uint32_t kMaxAccWordsPerLane = 4;
// Split grid: one wave of two workgroups per compute unit, rounded down, and
// no split shorter than one step of the workgroup. A second wave (four per
// unit, rounded up, the rule before) shortened the last wave's tail but cost
// more than it saved at every length measured: H100, 2026-12-06, two rounds,
// one wave against two, MHA 32/32 B1 L4096-L65536 1.01-1.11x (D256 L32768
// 0.381 -> 0.344 ms), B2 L4096-L32768 1.06-1.11x, B4 1.02-1.06x, B8 L4096
// 1.01-1.06x, B16 L4096 1.01x; GQA 32/8 D128 f32 K/V 1.00-1.05x, bf16
// 1.00-1.12x; H200, same day, 1.03-1.17x on B1-B8 MHA, bf16 and f32 GQA.
// Splits of 16384 keys in one wave still beat twice as many (H200, D64: B1
// L131072 8 splits 0.2444 ms against 16 0.2472, B2 L65536 4 against 8, B4
// L32768 2 against 4).
constexpr uint32_t kWorkgroupsPerComputeUnit = 2;
// Except where one wave is a single split, the batch alone filling it (MHA
// B8 and up): a walk longer than this many keys then takes two splits (H200,
// same day, D64/D128: B8 L16384 0.2531 -> 0.2472 ms and 0.4935 -> 0.4822, B8
// L32768 0.5033 -> 0.4835 and 0.9834 -> 0.9620, B16 D64 L32768 0.970 ->
// 0.958, B16 L16384 -0.7% and +0.9%; at L8192 one split is as fast or faster,
// B16 D64 0.2425 against 0.2507).
constexpr uint32_t kLongestSingleSplitKeys = 8192;
// The plan cache keys host lengths by split_length_bucket: the rule must
// decide the same for every length of a bucket.
static_assert(kLongestSingleSplitKeys % kSplitLengthGranule == 0, "the bound is a whole number of granules");
constexpr uint32_t kFlashKeysPerSplitUnknownDevice = 512;

}  // namespace

GeometryOrReason flash_geometry(const TextVariant& v, const DeviceCaps& caps, const TextShape& s, TextGeometry g) {
  auto no = [](std::string why) { return GeometryOrReason{std::nullopt, std::move(why)}; };
  if (!caps.subgroup_shuffle) return no("needs subgroup shuffles in compute shaders, device has none");
  const uint32_t sg = caps.subgroup_size;
  g.workgroup_size = std::min(v.workgroup_size, floor_pow2(caps.max_workgroup_invocations));
  if (sg == 0 || g.workgroup_size < sg) return no(fmt::format("needs a workgroup of at least one subgroup ({})", sg));
  std::string why = require_full_subgroups(caps, g.workgroup_size, g.required_subgroup_size);
  if (!why.empty()) return no(why);

  // One key row is split into words over a power-of-two group of lanes.
  const uint32_t elems_per_word = TEXT_FLASH_ELEMS_PER_WORD(dtype_code(s.kv), s.head_dim, s.tiered);
  const uint32_t row_words = s.head_dim / elems_per_word;
  g.key_lanes = std::min(sg, ceil_pow2(row_words));
  const uint32_t words_per_lane = (row_words + g.key_lanes - 1) / g.key_lanes;
  const uint32_t acc_words_per_word = std::max(1u, elems_per_word / 8);  // 16 codes: two f16 words' accumulators
  const uint32_t acc_words = words_per_lane * acc_words_per_word;
  if (acc_words > kMaxAccWordsPerLane)
    return no(fmt::format("needs head_dim <= {} for subgroup size {}",
                          kMaxAccWordsPerLane / acc_words_per_word * elems_per_word * sg, sg));
  const uint32_t gqa = s.num_heads / s.num_kv_heads;
  g.head_group = largest_divisor_at_most(gqa, std::min(v.target_rows, kMaxAccWordsPerLane / acc_words));
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
  g.splits = device_filling_splits(caps, s, base, {kWorkgroupsPerComputeUnit, step, kFlashKeysPerSplitUnknownDevice, true});
  if (g.splits == 1 && s.kv_len_max() > kLongestSingleSplitKeys) g.splits = std::min(2u, split_grid_cap(caps, s));
  return {g, ""};
}

}  // namespace vkattn::planner

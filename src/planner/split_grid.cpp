#include "planner/split_grid.hpp"

#include <algorithm>

namespace vkattn::planner {

namespace {

// Keys rounded up to whole granules (see kSplitLengthGranule), at least one.
uint64_t granules(uint32_t keys) { return uint64_t(std::max(1u, split_length_bucket(keys))) * kSplitLengthGranule; }

}  // namespace

uint32_t last_split_partials_per_invocation(const TextGeometry& g, uint32_t head_dim, uint32_t splits) {
  const uint32_t wg = std::max(1u, g.workgroup_size);
  const uint32_t columns = std::max(1u, g.head_group * head_dim / 4);
  const uint32_t lanes = std::max(1u, uint32_t(TEXT_LAST_SPLIT_LANES(wg, columns, g.merge_pool_vec4s, splits)));
  // One lane per column walks every split of each column it holds.
  return lanes > 1 ? (splits + lanes - 1) / lanes : (columns + wg - 1) / wg * splits;
}

uint32_t split_grid_cap(const DeviceCaps& caps, const TextShape& s) {
  return std::max(1u, caps.max_workgroup_count[2] / std::max(1u, s.batch));
}

uint32_t device_filling_splits(const DeviceCaps& caps, const TextShape& s, uint64_t workgroups_per_split,
                               const SplitPolicy& policy) {
  const uint64_t base = std::max<uint64_t>(1, workgroups_per_split);
  const uint64_t keys = s.kv_len_max();
  const uint64_t min_keys = granules(policy.min_keys_per_split);
  const uint64_t unknown_keys = granules(policy.keys_per_split_unknown_device);
  const uint64_t by_length = (keys + min_keys - 1) / min_keys;
  const uint64_t grid = uint64_t(policy.workgroups_per_compute_unit) * caps.compute_units;
  const uint64_t wanted = !caps.compute_units        ? (keys + unknown_keys - 1) / unknown_keys
                          : policy.within_one_wave ? grid / base
                                                   : (grid + base - 1) / base;
  return uint32_t(std::clamp<uint64_t>(std::min(wanted, by_length), 1, split_grid_cap(caps, s)));
}

}  // namespace vkattn::planner

#include "planner/bdpa_planner.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "planner/geometry_rules.hpp"
#include "planner/plan_render.hpp"
#include "planner/selection.hpp"
#include "planner/selection_log.hpp"
#include "planner/split_grid.hpp"
#include "planner/text_variants.hpp"
#include "shaders/bdpa_interface.h"
#include "vkattn/error.hpp"

namespace vkattn::planner {

namespace {


struct BdpaRule {
  const char* family;
  const char* reason;
  bool (*applies)(const BdpaGeometry&);
};

bool always(const BdpaGeometry&) { return true; }
bool long_kv(const BdpaGeometry& g) { return g.splits >= 2; }

constexpr BdpaRule kBdpaRules[] = {
    {"bdpa_decode_split", "split_kv: the index spans several chunks; splits fill the device", long_kv},
    {"bdpa_decode", "short_kv: one workgroup per KV head walks every key", always},
    {"bdpa_prefill_tiled", "tiled: the query rows of a workgroup share each rebuilt K/V tile", always},
};

}  // namespace

BdpaGeometryOrReason bdpa_geometry(const BdpaVariant& v, const DeviceCaps& caps, const BdpaShape& s) {
  auto no = [](std::string why) { return BdpaGeometryOrReason{std::nullopt, std::move(why)}; };
  if (s.phase() != v.phase) return no(fmt::format("{}-only, call is {}", to_string(v.phase), to_string(s.phase())));
  if (s.q != v.q || s.basis != v.basis)
    return no(fmt::format("takes Q={} basis={}, call has Q={} basis={}", to_string(v.q), to_string(v.basis),
                          to_string(s.q), to_string(s.basis)));
  if (s.head_dim == 0 || s.head_dim % 8 != 0 || s.head_dim > v.max_head_dim)
    return no(fmt::format("needs head_dim a multiple of 8 up to {}, got {}", v.max_head_dim, s.head_dim));
  BdpaGeometry g;
  const uint32_t gqa = s.num_kv_heads ? s.num_heads / s.num_kv_heads : 1;
  g.head_group = largest_divisor_at_most(gqa, v.target_rows);
  if (v.phase == Phase::prefill) {
    g.q_pos = std::max(1u, v.target_rows / g.head_group);
    uint32_t need = 1;
    while (need < s.seq_len && need < g.q_pos) need *= 2;
    g.q_pos = std::min(g.q_pos, need);
  }
  g.workgroup_size = std::min(v.workgroup_size, floor_pow2(caps.max_workgroup_invocations));
  uint32_t tk = v.max_tile_keys;
  auto bytes = [&](uint32_t keys) { return uint32_t(BDPA_SHARED_BYTES(g.rows(), s.head_dim, keys)); };
  while (tk > v.min_tile_keys && bytes(tk) > caps.max_shared_memory_bytes) tk /= 2;
  if (bytes(tk) > caps.max_shared_memory_bytes)
    return no(fmt::format("needs {} bytes of shared memory (head_dim {}, {} rows, {} keys), device has {}", bytes(tk),
                          s.head_dim, g.rows(), tk, caps.max_shared_memory_bytes));
  g.tile_keys = tk;
  g.shared_bytes = bytes(tk);
  g.acc_chunks = (g.rows() * s.head_dim / 4 + g.workgroup_size - 1) / g.workgroup_size;
  if (v.split) {
    const uint64_t by_length = (uint64_t(s.kv_len) + kSplitChunkKeys - 1) / kSplitChunkKeys;
    const uint32_t grid_cap = std::max(1u, caps.max_workgroup_count[2] / std::max(1u, s.batch));
    g.splits = static_cast<uint32_t>(std::clamp<uint64_t>(by_length, 1, grid_cap));
  }
  return {g, ""};
}

BdpaPlan plan_bdpa(const DeviceCaps& caps, const BdpaShape& s, const PlanOptions& options) {
  BdpaPlan plan;
  for (const auto& v : bdpa_variants()) {
    if (v.phase != s.phase() || v.q != s.q || v.basis != s.basis) continue;
    auto g = bdpa_geometry(v, caps, s);
    plan.candidates.push_back({v.name, g.geometry.has_value(), g.geometry ? "eligible" : g.reason});
  }
  // The key tile and the rows are sized from shared memory.
  for (auto [name, value] : {std::pair{"tile_keys", options.tile_keys}, std::pair{"rows", options.rows}})
    if (value)
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("{}: expected unset for bdpa attention (sized from shared memory), got {}", name, value));
  auto tuned = [&](BdpaPlan p) {
    if (options.splits) {
      if (!p.variant->split)
        throw Error(ErrorKind::invalid_argument,
                    fmt::format("splits: expected 0 for the non-split variant {}, got {}", p.variant->name,
                                options.splits));
      p.geometry.splits = options.splits;
    }
    log_selection_once("bdpa", p.variant->name, p.reason);
    return p;
  };

  const std::string forced = requested_variant(options, s.phase());
  if (!forced.empty()) {
    const BdpaVariant* v = find_bdpa_variant(forced);
    BdpaGeometryOrReason g;
    std::string rejected;
    if (!v)
      rejected = unknown_variant("bdpa", forced);
    else if (!(g = bdpa_geometry(*v, caps, s)).geometry)
      rejected = fmt::format("variant '{}' rejected: {}", forced, g.reason);
    if (rejected.empty()) {
      plan.variant = v;
      plan.geometry = *g.geometry;
      plan.reason = "override";
      return tuned(plan);
    }
    reject_override(rejected, v != nullptr, options, plan.warnings);
  }
  for (const auto& rule : kBdpaRules) {
    const BdpaVariant* v = find_bdpa_variant(std::string(rule.family) + "_" + dtype_suffix(s.q, s.basis));
    if (!v || v->phase != s.phase()) continue;
    auto g = bdpa_geometry(*v, caps, s);
    if (!g.geometry || !rule.applies(*g.geometry)) continue;
    plan.variant = v;
    plan.geometry = *g.geometry;
    plan.reason = rule_reason(rule.reason, !forced.empty());
    return tuned(plan);
  }
  std::string whys;
  for (auto& c : plan.candidates) whys += fmt::format("; {}: {}", c.variant, c.why);
  throw Error(ErrorKind::unsupported, fmt::format("bdpa attention: no variant can run head_dim {} Q={} basis={} on '{}'{}",
                                                  s.head_dim, to_string(s.q), to_string(s.basis), caps.name,
                                                  whys.empty() ? "; no row takes these dtypes" : whys));
}

Plan public_view(const BdpaPlan& plan) {
  const BdpaGeometry& g = plan.geometry;
  Plan view = plan_header(PlanFamily::bdpa, plan.variant->name, plan);
  // No lanes per key row, no required subgroup size.
  view.geometry = {g.workgroup_size, g.q_pos, g.head_group, g.tile_keys, g.splits, g.acc_chunks, 0, g.shared_bytes, 0};
  return view;
}

}  // namespace vkattn::planner

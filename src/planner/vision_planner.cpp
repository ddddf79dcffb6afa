#include "planner/vision_planner.hpp"

#include <fmt/format.h>

#include "planner/fragment_geometry.hpp"
#include "planner/geometry_rules.hpp"
#include "planner/plan_render.hpp"
#include "planner/selection.hpp"

#include <algorithm>

#include "planner/selection_log.hpp"
#include "planner/workgroup_geometry.hpp"
#include "shaders/vision_tile_arrays.h"
#include "vkattn/error.hpp"

namespace vkattn::planner {

namespace {

// A row that stages f32 inputs as f16 tiles computes below the inputs' precision.
bool reduces_precision(const VisionVariant& v, const VisionShape& s) { return v.f16_shared && s.dtype == DType::f32; }

constexpr const char* kReducedNote = "f32 Q/K/V rounded to f16 tiles (allow_reduced_precision)";
constexpr const char* kReducedNeeds = "rounds f32 Q/K/V to f16 tiles; needs allow_reduced_precision";

// A text engine's geometry for a vision call: its query rows are patches.
VisionGeometry from_text_geometry(const TextGeometry& t) {
  VisionGeometry g;
  g.queries = t.q_pos;
  g.tile = t.tile_keys;
  g.workgroup_size = t.workgroup_size;
  g.shared_bytes = t.shared_bytes;
  g.kv_stages = t.kv_stages;
  g.required_subgroup_size = t.required_subgroup_size;
  return g;
}

}  // namespace

uint32_t vision_shared_bytes(uint32_t queries, uint32_t head_dim, uint32_t tile, bool f16_shared) {
  const uint32_t f32_tile = f16_shared ? 1 : tile, f16_tile = f16_shared ? tile : 1;
  return VIS_TILE_SHARED_BYTES(queries, head_dim, tile, f32_tile, f16_tile);
}

VisionGeometryOrReason vision_geometry(const VisionVariant& v, const DeviceCaps& caps, const VisionShape& s) {
  auto no = [](std::string why) { return VisionGeometryOrReason{std::nullopt, std::move(why)}; };
  if (s.dtype != v.dtype)
    return no(fmt::format("takes {} inputs, call has {}", to_string(v.dtype), to_string(s.dtype)));
  if (s.head_dim == 0 || s.head_dim % 8 != 0)
    return no(fmt::format("needs head_dim a multiple of 8, got {}", s.head_dim));
  if (s.head_dim > v.max_head_dim) return no(fmt::format("needs head_dim <= {}, got {}", v.max_head_dim, s.head_dim));
  if (v.head_major && s.layout == VisionLayout::hpd)
    return no("transposes PHD tensors to head-major; the call is already HPD (every variant reads HPD directly)");
  if (v.subgroup && !caps.subgroup_arithmetic) return no("needs subgroup arithmetic in compute shaders, device has none");

  VisionGeometry g;
  if (v.kind == VisionKind::workgroup_matrices) {
    // A workgroup's rows are patches of one head; K/V are the call's own contiguous f16 tensors.
    const auto w = workgroup_geometry(WorkgroupMatrixLimits{v.cooperative_matrix, v.queries, v.max_tile}, caps,
                                      s.head_dim);
    if (!w.geometry) return no(w.reason);
    return {from_text_geometry(*w.geometry), ""};
  }
  if (v.kind == VisionKind::fragments) {
    // Every head is its own KV head: a workgroup's rows are patches of one head.
    const auto f = fragment_geometry(FragmentLimits{v.cooperative_matrix, v.queries, v.max_tile, v.min_tile}, caps,
                                     s.head_dim, 1);
    if (!f.geometry) return no(f.reason);
    return {from_text_geometry(*f.geometry), ""};
  }
  g.workgroup_size = std::min(v.workgroup_size, floor_pow2(caps.max_workgroup_invocations));
  if (v.subgroup) {
    std::string why = require_full_subgroups(caps, g.workgroup_size, g.required_subgroup_size);
    if (!why.empty()) return no(why);
  }
  if (v.kind == VisionKind::reference) {
    g.queries = 1;
    g.tile = 1;
    g.acc_chunks = 1;
    g.shared_bytes = vision_shared_bytes(1, s.head_dim, 1, false);
    return {g, ""};
  }
  g.queries = v.queries;
  const uint32_t limit = caps.max_shared_memory_bytes;
  uint32_t tile = v.max_tile;
  while (tile > v.min_tile && vision_shared_bytes(g.queries, s.head_dim, tile, v.f16_shared) > limit) tile /= 2;
  const uint32_t bytes = vision_shared_bytes(g.queries, s.head_dim, tile, v.f16_shared);
  if (bytes > limit)
    return no(fmt::format("needs {} bytes of shared memory (head_dim {}, {} queries, {}-key tiles), device has {}",
                          bytes, s.head_dim, g.queries, tile, limit));
  g.tile = tile;
  g.shared_bytes = bytes;
  g.acc_chunks = (g.queries * s.head_dim / 4 + g.workgroup_size - 1) / g.workgroup_size;
  return {g, ""};
}

namespace {

// Ordered selection rules: the first eligible family that a rule accepts wins.
struct VisionRule {
  const char* family;
  const char* reason;
  bool (*applies)(const VisionShape&, const VisionGeometry&);
  const char* when;  // the condition, for explaining rows passed over
};

bool always(const VisionShape&, const VisionGeometry&) { return true; }
bool many_patches(const VisionShape& s, const VisionGeometry&) { return s.patches >= 1024; }
bool wide_tiles(const VisionShape& s, const VisionGeometry& g) { return s.patches >= 64 && g.tile >= 32; }
bool eight_queries(const VisionShape& s, const VisionGeometry&) { return s.patches >= 8; }
bool eight_queries_16_keys(const VisionShape& s, const VisionGeometry& g) { return s.patches >= 8 && g.tile >= 16; }
bool four_queries(const VisionShape& s, const VisionGeometry&) { return s.patches >= 4; }

constexpr VisionRule kVisionRules[] = {
    {"vision_flash_coopmat", "tensor_cores: flash attention on cooperative matrices (f16 16x16x16, f32 accumulate)",
     always, ""},
    {"vision_flash_coopmat2",
     "tensor_cores_workgroup: flash attention on workgroup-scope matrices (cooperative_matrix2; K/V loaded by tensor "
     "addressing, f16 products, f32 accumulate)",
     always, ""},
    {"vision_flash_sg_f16s_q16_t64", "subgroup reductions and unshrunk 64-key f16 tiles for >= 1024 patches",
     many_patches, ">= 1024 patches"},
    {"vision_flash_sg_q16", "subgroup reductions, 16 queries per 32-key f32 tile", wide_tiles,
     ">= 64 patches and 32-key tiles"},
    {"vision_flash_q8_t64", "unshrunk 64-key f32 tiles for >= 1024 patches", many_patches, ">= 1024 patches"},
    {"vision_flash_q16", "16 queries share each unshrunk 32-key f32 tile", wide_tiles, ">= 64 patches and 32-key tiles"},
    {"vision_flash_f16s_q16", "f32 tiles would shrink below 32 keys at this head dim; f16 tiles stay wide",
     wide_tiles, ">= 64 patches and 32-key tiles"},
    {"vision_flash_q8", "8 queries per K/V tile of >= 16 keys", eight_queries_16_keys, ">= 8 patches and 16-key tiles"},
    {"vision_flash_f16s_q8", "f32 tiles would shrink below 16 keys at this head dim; f16 tiles stay wider",
     eight_queries_16_keys, ">= 8 patches and 16-key tiles"},
    {"vision_flash_q8", "8 queries per K/V tile (narrow: shared memory is short)", eight_queries, ">= 8 patches"},
    {"vision_flash_q4", "4 queries per K/V tile (few patches)", four_queries, ">= 4 patches"},
    {"vision_flash_q1", "one query per workgroup (fewer than 4 patches)", always, ""},
    {"vision_reference", "reference fallback: no flash tile fits the device", always, ""},
};

const VisionVariant* variant_of(const std::string& family, DType d) {
  return find_vision_variant(family + "_" + std::string(to_string(d)));
}

}  // namespace

VisionPlan plan_vision(const DeviceCaps& caps, const VisionShape& s, const PlanOptions& options) {
  // `vkattn plan vision` passes the shape unvalidated; an empty call has no plan.
  if (s.patches == 0) throw Error(ErrorKind::invalid_argument, "patches: expected >= 1, got 0");
  if (s.num_heads == 0) throw Error(ErrorKind::invalid_argument, "num_heads: expected >= 1, got 0");
  reject_unhonoured_options("vision", options);
  VisionPlan plan;
  for (const auto& v : vision_variants()) {
    if (v.dtype != s.dtype) continue;
    auto g = vision_geometry(v, caps, s);
    const bool allowed = !reduces_precision(v, s) || options.allow_reduced_precision;
    std::string why = !g.geometry ? g.reason : !allowed ? kReducedNeeds : "eligible";
    if (g.geometry && allowed && v.head_major) why = "eligible (override only: two extra transposes each way)";
    if (g.geometry && allowed && runs_text_engine(v.kind) && !v.cooperative_matrix)
      why = "eligible (override only: the plain-GLSL build of the tensor-core engine, for checking it)";
    plan.candidates.push_back({v.name, g.geometry.has_value() && allowed, why});
  }

  if (!options.variant.empty()) {
    const VisionVariant* v = find_vision_variant(options.variant);
    std::string rejected;
    VisionGeometryOrReason g;
    if (!v) {
      rejected = unknown_variant("vision", options.variant);
    } else {
      g = vision_geometry(*v, caps, s);
      if (!g.geometry) rejected = fmt::format("variant '{}' rejected: {}", options.variant, g.reason);
      else if (reduces_precision(*v, s) && !options.allow_reduced_precision)
        rejected = fmt::format("variant '{}' rejected: {}", options.variant, kReducedNeeds);
    }
    if (rejected.empty()) {
      plan.variant = v;
      plan.geometry = *g.geometry;
      plan.reason = reduces_precision(*v, s) ? fmt::format("override; {}", kReducedNote) : "override";
      log_selection_once("vision", v->name, plan.reason);
      return plan;
    }
    reject_override(rejected, v != nullptr, options, plan.warnings);
  }

  for (const auto& rule : kVisionRules) {
    const VisionVariant* v = variant_of(rule.family, s.dtype);
    if (!v) continue;
    auto g = vision_geometry(*v, caps, s);
    if (!g.geometry || (reduces_precision(*v, s) && !options.allow_reduced_precision)) continue;
    if (!rule.applies(s, *g.geometry)) {
      // An eligible row an earlier rule passed over: say what that rule wanted.
      for (auto& c : plan.candidates)
        if (c.variant == v->name && c.why == "eligible")
          c.why = fmt::format("eligible; passed over: its rule wants {} (call: {} patches, {}-key tiles here)",
                              rule.when, s.patches, g.geometry->tile);
      continue;
    }
    plan.variant = v;
    plan.geometry = *g.geometry;
    plan.reason = rule_reason(rule.reason, !options.variant.empty());
    if (reduces_precision(*v, s)) plan.reason += fmt::format("; {}", kReducedNote);
    for (auto& c : plan.candidates)
      if (c.why == "eligible" && c.variant != v->name) c.why = "eligible; an earlier rule chose the winner";
    log_selection_once("vision", v->name, plan.reason);
    return plan;
  }
  std::string whys;
  for (auto& c : plan.candidates) whys += fmt::format("; {}: {}", c.variant, c.why);
  throw Error(ErrorKind::unsupported, fmt::format("vision attention: no variant can run head_dim {} {} on '{}'{}",
                                                  s.head_dim, to_string(s.dtype), caps.name, whys));
}

Plan public_view(const VisionPlan& plan) {
  const VisionGeometry& g = plan.geometry;
  Plan view = plan_header(PlanFamily::vision, plan.variant->name, plan);
  view.geometry.workgroup_size = g.workgroup_size;
  view.geometry.query_rows = g.queries;
  view.geometry.tile_keys = g.tile;
  view.geometry.acc_chunks = g.acc_chunks;
  view.geometry.shared_bytes = g.shared_bytes;
  view.geometry.required_subgroup_size = g.required_subgroup_size;
  view.geometry.kv_stages = g.kv_stages;
  return view;
}

std::string explain(const VisionPlan& plan) { return vkattn::explain(public_view(plan)); }
std::string plan_to_json(const VisionPlan& plan) { return to_json(public_view(plan)); }

}  // namespace vkattn::planner

#include "planner/text_planner.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "planner/fragment_geometry.hpp"
#include "planner/geometry_rules.hpp"
#include "planner/workgroup_geometry.hpp"
#include "planner/plan_render.hpp"
#include "planner/selection.hpp"
#include "planner/selection_log.hpp"
#include "planner/split_grid.hpp"
#include "shaders/flash_interface.h"
#include "shaders/stream_interface.h"
#include "shaders/text_attention_interface.h"
#include "shaders/text_tile_arrays.h"
#include "vkattn/error.hpp"

namespace vkattn::planner {

namespace {

// Bytes text_attention.comp declares in shared memory for this geometry
// (its arrays, shaders/text_tile_arrays.h).
uint32_t shared_bytes(uint32_t rows, uint32_t d, uint32_t tk) { return TEXT_TILE_SHARED_BYTES(rows, d, tk); }

// Bytes text_decode_online.comp declares for this geometry (its arrays,
// TEXT_ONLINE_SHARED_BYTES in shaders/text_attention_interface.h); without
// subgroup arithmetic the workgroup is one group of lanes, plus the lane-sum tree.
uint32_t online_shared_bytes(const TextVariant& v, const TextGeometry& g, uint32_t d, uint32_t subgroup) {
  const bool lane_tree = !v.needs_subgroup_arithmetic;
  const uint32_t nsg = lane_tree ? 1 : g.workgroup_size / subgroup;
  return TEXT_ONLINE_SHARED_BYTES(nsg, g.head_group, d, g.tile_keys, g.workgroup_size, lane_tree);
}

// PlanOptions::rows: the most query rows a tuning value may give a workgroup
// (the largest row count of the scalar variants' tables, twice over).
constexpr uint32_t kMaxTunedRows = 64;
// decode_flash: K (and V) words one lane keeps in flight per step, at most.
constexpr uint32_t kMaxFlashWordsInFlight = 16;

}  // namespace

GeometryOrReason text_geometry(const TextVariant& v, const DeviceCaps& caps, const TextShape& s) {
  auto no = [](std::string why) { return GeometryOrReason{std::nullopt, std::move(why)}; };
  if (s.phase() != v.phase) return no(fmt::format("{}-only, call is {}", to_string(v.phase), to_string(s.phase())));
  if (s.q != v.q || s.kv != v.kv)
    return no(fmt::format("takes Q={} KV={}, call has Q={} KV={}", to_string(v.q), to_string(v.kv), to_string(s.q),
                          to_string(s.kv)));
  if (s.head_dim % 8 != 0 || s.head_dim == 0)
    return no(fmt::format("needs head_dim a multiple of 8, got {}", s.head_dim));
  if (s.head_dim > v.max_head_dim) return no(fmt::format("needs head_dim <= {}, got {}", v.max_head_dim, s.head_dim));
  if (s.head_dim < v.min_head_dim) return no(fmt::format("needs head_dim >= {}, got {}", v.min_head_dim, s.head_dim));
  if (v.needs_subgroup_arithmetic && !caps.subgroup_arithmetic)
    return no("needs subgroup arithmetic in compute shaders, device has none");
  if (v.engine == Engine::flash_fragments) return fragment_geometry(v, caps, s);
  if (v.engine == Engine::workgroup_matrices) return workgroup_geometry(v, caps, s);
  if (v.engine == Engine::streamed_fragments) return stream_geometry(v, caps, s);

  TextGeometry g;
  const uint32_t gqa = s.num_kv_heads ? s.num_heads / s.num_kv_heads : 1;
  g.head_group = largest_divisor_at_most(gqa, v.target_rows);
  if (v.kind == Kind::tiled) {
    g.q_pos = std::max(1u, v.target_rows / g.head_group);
    uint32_t need = 1;  // the power of two covering seq_len, needed only up to q_pos (no wrap for huge seq_len)
    while (need < s.seq_len && need < g.q_pos) need *= 2;
    g.q_pos = std::min(g.q_pos, need);
  }
  if (v.engine == Engine::registers_flash) return flash_geometry(v, caps, s, g);
  g.workgroup_size = std::min(v.workgroup_size, floor_pow2(caps.max_workgroup_invocations));
  if (v.needs_subgroup_arithmetic) {
    std::string why = require_full_subgroups(caps, g.workgroup_size, g.required_subgroup_size);
    if (!why.empty()) return no(why);
  }
  if (v.engine == Engine::registers_online) {
    // With subgroups: four of the reported size per workgroup. Without: the
    // workgroup is one group of lanes, a power of two covering D/4. Either way a
    // lane holds ceil(D/4 / lanes) vec4 slices of each query head's accumulator.
    uint32_t sg = caps.subgroup_size;
    if (!v.needs_subgroup_arithmetic) {
      sg = 32;
      while (sg < s.head_dim / 4) sg *= 2;
      sg = std::min(sg, floor_pow2(caps.max_workgroup_invocations));
    }
    const uint32_t slices = (s.head_dim / 4 + sg - 1) / sg;
    g.workgroup_size = v.needs_subgroup_arithmetic
                           ? std::min(4 * sg, floor_pow2(caps.max_workgroup_invocations) / sg * sg)
                           : sg;
    g.head_group = largest_divisor_at_most(gqa, std::max(1u, std::min(v.target_rows, 8 / slices)));
    g.tile_keys = v.max_tile_keys;
    g.acc_chunks = slices;
    g.shared_bytes = online_shared_bytes(v, g, s.head_dim, sg);
    if (g.shared_bytes > caps.max_shared_memory_bytes)
      return no(fmt::format("needs {} bytes of shared memory to merge subgroups, device has {}", g.shared_bytes,
                            caps.max_shared_memory_bytes));
    if (slices > 4) return no(fmt::format("needs head_dim <= {} for subgroup size {}", 16 * sg, sg));
  } else {
    const uint32_t rows = g.rows();
    const uint32_t limit = caps.max_shared_memory_bytes;
    uint32_t tk = v.max_tile_keys;
    while (tk > v.min_tile_keys && shared_bytes(rows, s.head_dim, tk) > limit) tk /= 2;
    if (shared_bytes(rows, s.head_dim, tk) > limit)
      return no(fmt::format("needs {} bytes of shared memory (head_dim {}, {} rows, {} keys), device has {}",
                            shared_bytes(rows, s.head_dim, tk), s.head_dim, rows, tk, limit));
    g.tile_keys = tk;
    g.shared_bytes = shared_bytes(rows, s.head_dim, tk);
    g.acc_chunks = (rows * s.head_dim / 4 + g.workgroup_size - 1) / g.workgroup_size;
  }
  if (v.kind == Kind::split) {
    // Flash-decoding: no workgroup walks more than kSplitChunkKeys keys. A long
    // serial walk leaves memory latency exposed; on the H200, 128-key chunks
    // beat 512-key ones by 1.3-10x, also when the batch alone fills the device.
    const uint64_t by_length = (uint64_t(s.kv_len_max()) + kSplitChunkKeys - 1) / kSplitChunkKeys;
    g.splits = static_cast<uint32_t>(std::clamp<uint64_t>(by_length, 1, split_grid_cap(caps, s)));
  }
  return {g, ""};
}

namespace {

// Ordered selection rules: the first eligible family that a rule accepts wins.
struct TextRule {
  const char* family;
  const char* reason;
  bool (*applies)(const DeviceCaps&, const TextShape&, const TextGeometry&);
};

bool always(const DeviceCaps&, const TextShape&, const TextGeometry&) { return true; }
bool long_kv(const DeviceCaps&, const TextShape&, const TextGeometry& g) { return g.splits >= 2; }
// Where decode_stream measured faster than decode_flash on the H200
// (2026-12-03, both forced in one run): query heads sharing a KV head (GQA
// 32/8 1.2-1.7x, MQA 8/1 up to 2.3x); with one head per KV head (MHA) 7 of
// its 8 fragment columns are padding and decode_flash won (0.137 against
// 0.155 ms at B8 L4096). It also beat decode_flash_coopmat on every MQA D64
// case of the suite (B32 H8/1 L32768 0.115 against 0.138 ms), which stays
// available by override and to `vkattn tune`. At D256 (two warps per tile,
// 2026-12-04) it read GQA and MQA 1.1-4.6x faster than decode_flash.
// bf16 K/V costs it a warp maximum and a conversion per tile (staged as f16
// times a power of two); against decode_flash on the H200 (2026-12-06, both
// in one run) it won where the batch has many KV heads (B32 H32/8 1.04x,
// B32 H8/1 1.42-1.90x) and lost or tied with few (B1 H32/8 L4096 0.0181
// against 0.0159 ms, L32768 0.0577 against 0.0568; B1 H8/1 L4096 0.0139
// against 0.0108).
constexpr uint64_t kBf16StreamMinKvRows = 32;
bool shared_kv_heads(const DeviceCaps&, const TextShape& s, const TextGeometry&) {
  if (s.num_heads / s.num_kv_heads < 2) return false;
  return s.kv != DType::bf16 || uint64_t(s.batch) * s.num_kv_heads >= kBf16StreamMinKvRows;
}

constexpr TextRule kTextRules[] = {
    {"prefill_flash_coopmat", "tensor_cores: flash attention on cooperative matrices (f16 16x16x16, f32 accumulate)",
     always},
    // After the fragment engine: on the H200 (2026-12-07, causal S4096 H32/8)
    // it took 1.11x its time at D128, 1.13x at D64 and 1.38x at D256
    // (docs/performance.md), so it runs where that engine cannot.
    {"prefill_flash_coopmat2",
     "tensor_cores_workgroup: flash attention on workgroup-scope matrices (cooperative_matrix2; K/V loaded by tensor "
     "addressing, f16 products, f32 accumulate)",
     always},
    {"decode_stream_coopmat",
     "tensor_core_stream: the query heads sharing a KV head as the 8 columns of one matrix product (f16 16x8x16, "
     "f32 accumulate), K/V streamed through registers, one wave of splits",
     shared_kv_heads},
    {"decode_flash", "flash_decode: 16-byte K/V words in registers, splits sized to fill the device", always},
    {"decode_online_split", "split_kv: the KV spans several chunks; subgroups stream K/V", long_kv},
    {"decode_split", "split_kv: the KV spans several chunks", long_kv},
    {"decode_online", "subgroup_online: subgroups stream K/V through registers", always},
    {"decode_subgroup", "subgroup_capable", always},
    {"decode_chunked", "chunked: lanes across head_dim >= 128 without subgroup operations", always},
    {"decode_streaming", "decode_streaming_fallback", always},
    {"prefill_tiled_large", "tiled_large_capable", always},
    {"prefill_tiled_small", "tiled_small_capable", always},
    {"prefill_streaming", "streaming_fallback", always},
};

const TextVariant* variant_of(const std::string& family, const TextShape& s) {
  return find_text_variant(family + "_" + dtype_suffix(s.q, s.kv));
}

}  // namespace

// Applies PlanOptions' tuning overrides to a chosen plan; an override the
// variant cannot take is an error (tuning is explicit, never silently dropped).
static TextPlan tuned(TextPlan plan, const DeviceCaps& caps, const TextShape& s, const PlanOptions& o) {
  TextGeometry& g = plan.geometry;
  // First the rows: the variant's geometry made again for them (key tile, splits and all).
  TextVariant sized = *plan.variant;
  if (o.rows && plan.variant->engine == Engine::streamed_fragments)
    throw Error(ErrorKind::invalid_argument,
                fmt::format("rows: expected 0 for {} (its fragments hold {} query heads), got {}", plan.variant->name,
                            STREAM_HEADS, o.rows));
  if (o.rows) {
    // Fragment rows are whole warps of FLASH_FRAG rows, up to the variant's own most.
    const bool fragments = plan.variant->engine == Engine::flash_fragments;
    const bool matrices = plan.variant->engine == Engine::workgroup_matrices;
    const uint32_t lo = fragments || matrices ? FLASH_FRAG : 1;
    const uint32_t hi = fragments ? plan.variant->target_rows : matrices ? kMaxWorkgroupMatrixRows : kMaxTunedRows;
    if (o.rows < lo || o.rows > hi || (o.rows & (o.rows - 1)))
      throw Error(ErrorKind::invalid_argument, fmt::format("rows: expected a power of two from {} to {} for {}, got {}",
                                                           lo, hi, plan.variant->name, o.rows));
    sized.target_rows = o.rows;
    auto regrown = text_geometry(sized, caps, s);
    if (!regrown.geometry) throw Error(ErrorKind::unsupported, fmt::format("rows: {}", regrown.reason));
    g = *regrown.geometry;
  }
  if (o.tile_keys) {
    if (o.tile_keys > 64 || (o.tile_keys & (o.tile_keys - 1)))
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("tile_keys: expected a power of two up to 64, got {}", o.tile_keys));
    if (plan.variant->engine == Engine::flash_fragments || plan.variant->engine == Engine::workgroup_matrices) {
      if (o.tile_keys < 16)
        throw Error(ErrorKind::invalid_argument,
                    fmt::format("tile_keys: expected 16, 32 or 64 for {}, got {}", plan.variant->name, o.tile_keys));
      auto forced = plan.variant->engine == Engine::flash_fragments
                        ? fragment_geometry(sized, caps, s, o.tile_keys)
                        : workgroup_geometry(sized, caps, s, g.q_pos, o.tile_keys);
      if (!forced.geometry) throw Error(ErrorKind::unsupported, fmt::format("tile_keys: {}", forced.reason));
      g = *forced.geometry;
    } else if (plan.variant->engine == Engine::streamed_fragments) {
      if (o.tile_keys != STREAM_KEYS)
        throw Error(ErrorKind::invalid_argument, fmt::format("tile_keys: expected {} for {}, got {}", STREAM_KEYS,
                                                             plan.variant->name, o.tile_keys));
    } else if (plan.variant->engine == Engine::registers_flash) {
      // Each lane holds the K and V words of every key of a step in registers.
      if (o.tile_keys * g.acc_chunks > kMaxFlashWordsInFlight)
        throw Error(ErrorKind::unsupported,
                    fmt::format("tile_keys: expected at most {} for head_dim {} on this device, got {}",
                                kMaxFlashWordsInFlight / g.acc_chunks, s.head_dim, o.tile_keys));
    } else if (plan.variant->engine == Engine::shared_tiles) {
      const uint32_t need = shared_bytes(g.rows(), s.head_dim, o.tile_keys);
      if (need > caps.max_shared_memory_bytes)
        throw Error(ErrorKind::unsupported, fmt::format("tile_keys: {} keys need {} bytes of shared memory, device "
                                                        "has {}",
                                                        o.tile_keys, need, caps.max_shared_memory_bytes));
      g.shared_bytes = need;
    } else if (!plan.variant->needs_subgroup_arithmetic) {
      // decode_chunked sums lane partials for every (head, key) of a step in shared memory.
      TextGeometry wider = g;
      wider.tile_keys = o.tile_keys;
      const uint32_t need = online_shared_bytes(*plan.variant, wider, s.head_dim, caps.subgroup_size);
      if (need > caps.max_shared_memory_bytes)
        throw Error(ErrorKind::unsupported, fmt::format("tile_keys: {} keys need {} bytes of shared memory, device "
                                                        "has {}",
                                                        o.tile_keys, need, caps.max_shared_memory_bytes));
      g.shared_bytes = need;
    }
    g.tile_keys = o.tile_keys;
  }
  // After the key tile: a fragment geometry made for it comes with its own split count.
  if (o.splits) {
    if (plan.variant->kind != Kind::split)
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("splits: expected 0 for the non-split variant {}, got {}", plan.variant->name, o.splits));
    g.splits = o.splits;
  }
  return plan;
}

TextPlan plan_text(const DeviceCaps& caps, const TextShape& s, const PlanOptions& options) {
  return tuned(plan_untuned(caps, s, options), caps, s, options);
}

TextPlan plan_untuned(const DeviceCaps& caps, const TextShape& s, const PlanOptions& options) {
  // The rules divide by these; `vkattn plan` passes them unvalidated.
  if (s.batch == 0) throw Error(ErrorKind::invalid_argument, "batch: expected >= 1, got 0");
  if (s.seq_len == 0) throw Error(ErrorKind::invalid_argument, "seq_len: expected >= 1, got 0");
  if (s.num_kv_heads == 0) throw Error(ErrorKind::invalid_argument, "num_kv_heads: expected >= 1, got 0");
  if (s.num_heads == 0 || s.num_heads % s.num_kv_heads != 0)
    throw Error(ErrorKind::invalid_argument,
                fmt::format("num_heads: expected a positive multiple of num_kv_heads ({}), got {}", s.num_kv_heads,
                            s.num_heads));
  // Rows that round f32 inputs to f16 are the planner's to pick only when the
  // caller allows it; naming one as an override is that permission.
  auto precision_bars = [&](const TextVariant& v) { return v.reduced_precision && !options.allow_reduced_precision; };
  TextPlan plan;
  for (const auto& v : text_variants()) {
    if (v.phase != s.phase() || v.q != s.q || v.kv != s.kv) continue;
    auto g = text_geometry(v, caps, s);
    std::string why = g.geometry ? "eligible" : g.reason;
    if (g.geometry && v.reduced_precision)
      why = options.allow_reduced_precision ? "eligible (rounds Q to f16: allow_reduced_precision is set)"
                                            : "rounds f32 Q to f16; needs allow_reduced_precision";
    plan.candidates.push_back({v.name, g.geometry.has_value() && !precision_bars(v), why});
  }

  const std::string forced = requested_variant(options, s.phase());
  if (!forced.empty()) {
    const TextVariant* v = find_text_variant(forced);
    std::string rejected;
    GeometryOrReason g;
    if (!v) {
      rejected = unknown_variant("text", forced);
    } else {
      g = text_geometry(*v, caps, s);
      if (!g.geometry) rejected = fmt::format("variant '{}' rejected: {}", forced, g.reason);
    }
    if (rejected.empty()) {
      plan.variant = v;
      plan.geometry = *g.geometry;
      plan.reason = "override";
      // doppler's adaptive swap: a streaming-prefill override on a short prompt
      // may use the tiled prefill, which is the same math with K/V reuse.
      if (v->family == "prefill_streaming" && s.seq_len <= 64) {
        for (const char* fam : {"prefill_tiled_large", "prefill_tiled_small"}) {
          const TextVariant* t = variant_of(fam, s);
          auto tg = t ? text_geometry(*t, caps, s) : GeometryOrReason{};
          if (tg.geometry) {
            plan.variant = t;
            plan.geometry = *tg.geometry;
            plan.reason = fmt::format("override_adaptive_prefill: {} replaced by {} for {} query rows", forced,
                                      t->name, s.seq_len);
            break;
          }
        }
      }
      log_selection_once("text", plan.variant->name, plan.reason);
      return plan;
    }
    reject_override(rejected, v != nullptr, options, plan.warnings);
  }

  for (const auto& rule : kTextRules) {
    const TextVariant* v = variant_of(rule.family, s);
    if (!v || v->phase != s.phase() || precision_bars(*v)) continue;
    auto g = text_geometry(*v, caps, s);
    if (!g.geometry || !rule.applies(caps, s, *g.geometry)) continue;
    plan.variant = v;
    plan.geometry = *g.geometry;
    plan.reason = rule_reason(rule.reason, !forced.empty());
    if (v->reduced_precision) plan.reason += "; Q rounded to f16 (allow_reduced_precision)";
    // Where tensor-core decode rows exist: say why they were not taken (text_variants.cpp, takes).
    if (is_quantized(s.kv) && s.phase() == Phase::decode && caps.cooperative_matrix_nv)
      plan.reason += "; quantized KV: the tensor-core decode takes f16/bf16 K/V only (staging codes as f16 "
                     "measured slower than dequantizing them in registers)";
    log_selection_once("text", v->name, plan.reason);
    return plan;
  }
  std::string whys;
  for (auto& c : plan.candidates) whys += fmt::format("; {}: {}", c.variant, c.why);
  throw Error(ErrorKind::unsupported,
              fmt::format("text attention: no variant can run head_dim {} Q={} KV={} on '{}'{}", s.head_dim,
                          to_string(s.q), to_string(s.kv), caps.name, whys));
}

Plan public_view(const TextPlan& plan) {
  const TextGeometry& g = plan.geometry;
  Plan view = plan_header(PlanFamily::text, plan.variant->name, plan);
  view.geometry = {g.workgroup_size, g.q_pos,     g.head_group,   g.tile_keys,           g.splits,
                   g.acc_chunks,     g.key_lanes, g.shared_bytes, g.required_subgroup_size, g.kv_stages};
  return view;
}

std::string explain(const TextPlan& plan) { return vkattn::explain(public_view(plan)); }
std::string plan_to_json(const TextPlan& plan) { return to_json(public_view(plan)); }

TextShape text_shape_of(const TextAttentionParams& p, DType q, DType kv, bool lengths_on_gpu) {
  TextShape shape;
  shape.batch = p.batch;
  shape.seq_len = p.seq_len;
  shape.num_heads = p.num_heads;
  shape.num_kv_heads = p.num_kv_heads;
  shape.head_dim = p.head_dim;
  shape.kv_len = *std::max_element(p.kv_len.begin(), p.kv_len.end());
  shape.q = q;
  shape.kv = kv;
  shape.tiered = p.layout == KvLayout::tiered;
  shape.contiguous = p.layout == KvLayout::contiguous;
  shape.out = q;
  if (lengths_on_gpu) {
    const uint64_t slots = p.slot_layout() == KvLayout::paged ? uint64_t(p.max_pages) * p.kv_capacity : p.kv_capacity;
    shape.kv_len_bound = uint32_t(std::min<uint64_t>(slots, UINT32_MAX));
  }
  return shape;
}

}  // namespace vkattn::planner

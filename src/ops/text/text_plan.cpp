#include "ops/text/text_plan.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "ops/plan_check.hpp"
#include "ops/recording.hpp"
#include "ops/text/text_validate.hpp"
#include "planner/selection.hpp"
#include "planner/tune_cache.hpp"
#include "shaders/text_attention_interface.h"
#include "vk/runtime.hpp"
#include "vkattn/error.hpp"
#include "vkattn/plan.hpp"

namespace vkattn {

// The push constants are 29 words in GLSL's std430 layout; the C++ mirror must match.
static_assert(sizeof(text::TextPush) == 29 * 4, "TextPush must mirror the GLSL push-constant block");

namespace {

uint32_t pow2_ceil(uint32_t n) {
  uint32_t p = 1;
  while (p < n && p < (1u << 31)) p *= 2;
  return p;
}

// The public plan of the planner's choice: specialization constants, grids and scratch.
Plan to_plan(const planner::TextPlan& tp, const DeviceCaps& caps, const TextAttentionParams& p,
             const TextTensorTypes& types) {
  const planner::TextGeometry& g = tp.geometry;
  Plan plan = planner::public_view(tp);

  // One split needs no reduce: the kernel normalises and writes the output itself.
  const bool split = tp.variant->kind == planner::Kind::split && g.splits > 1;
  PlanDispatch attention;
  // A pool past one binding is read through device addresses, by the same kernel built that way.
  attention.module = types.kv_by_address ? tp.variant->module_by_address() : tp.variant->module;
  if (types.kv_by_address)
    plan.reason += fmt::format("; K/V read through buffer device addresses, past the {}-byte binding range",
                               caps.max_storage_buffer_range);
  attention.required_subgroup_size = g.required_subgroup_size;
  auto& spec = attention.spec_constants;
  spec.assign(TEXT_SC_COUNT, 0);
  spec[TEXT_SC_HEAD_DIM] = p.head_dim;
  spec[TEXT_SC_WG_SIZE] = g.workgroup_size;
  spec[TEXT_SC_Q_POS] = g.q_pos;
  spec[TEXT_SC_HEAD_GROUP] = g.head_group;
  spec[TEXT_SC_TILE_KEYS] = g.tile_keys;
  spec[TEXT_SC_Q_TYPE] = dtype_code(types.q);
  spec[TEXT_SC_KV_TYPE] = dtype_code(types.kv);
  spec[TEXT_SC_O_TYPE] = dtype_code(types.out);
  spec[TEXT_SC_LAYOUT] = text::layout_code(p.layout);
  spec[TEXT_SC_SPLIT] = split ? 1 : 0;
  spec[TEXT_SC_ACC_CHUNKS] = g.acc_chunks;
  spec[TEXT_SC_SUBGROUP_SIZE] = caps.subgroup_size;
  spec[TEXT_SC_KEY_LANES] = g.key_lanes;
  spec[TEXT_SC_KV_GROUP] = text::is_quantized(types.kv) ? p.kv_quant_group : 0;
  const uint32_t gqa = p.num_heads / p.num_kv_heads;
  const uint64_t grid[3] = {(uint64_t(p.seq_len) + g.q_pos - 1) / g.q_pos,
                            uint64_t(p.num_kv_heads) * (gqa / g.head_group),
                            uint64_t(p.batch) * g.splits};  // 64-bit: the products may pass 2^32
  for (int i = 0; i < 3; ++i) {
    if (grid[i] > caps.max_workgroup_count[i])
      throw Error(ErrorKind::unsupported,
                  fmt::format("workgroups[{}]: expected at most {} (device limit), got {} for this shape", i,
                              caps.max_workgroup_count[i], grid[i]));
    attention.grid[i] = static_cast<uint32_t>(grid[i]);
  }
  plan.dispatches.push_back(std::move(attention));
  if (!split) return plan;

  const uint64_t rows = uint64_t(p.batch) * g.splits * p.seq_len * p.num_heads;
  plan.dispatches.push_back(
      ops::split_reduce_dispatch(caps, p.head_dim, types.out, rows, uint64_t(p.seq_len) * p.num_heads, p.batch));
  plan.scratch_bytes = rows * p.head_dim * 4 + rows * 8;  // partial outputs, then (max, sum) pairs
  return plan;
}

// A plan depends on the lengths only through the longest one a replay can
// read (TextShape::kv_len_max), so recordings whose lengths come from a GPU
// buffer share one entry whatever host hint they pass.
planner::PlanKey plan_key(uint64_t device, const TextAttentionParams& p, const TextTensorTypes& types,
                          const PlanOptions& options) {
  planner::PlanKey k;
  k.device = device;
  k.family = PlanFamily::text;
  const uint32_t longest = planner::text_shape_of(p, types.q, types.kv, types.kv_len_on_gpu).kv_len_max();
  // Layout (tiered: and the cold tier's), dtypes, quantization group and
  // by-address reads choose specialization constants or the module.
  k.shape = {p.batch,           p.seq_len,         p.num_heads,        p.num_kv_heads,     p.head_dim, longest,
             uint32_t(p.layout), uint32_t(p.slot_layout()), uint32_t(types.q), uint32_t(types.kv),
             uint32_t(types.out), text::is_quantized(types.kv) ? p.kv_quant_group : 0, uint32_t(types.kv_by_address)};
  k.options = options;
  return k;
}

}  // namespace

TextTensorTypes text_tensor_types(const TextAttentionTensors& t, const DeviceCaps& caps) {
  return {t.q.dtype(), t.k.dtype(), t.out.dtype(), t.kv_len.valid(), text::kv_by_address(t, caps)};
}

Plan plan_text(const DeviceCaps& caps, const TextAttentionParams& p, const TextTensorTypes& types,
               const PlanOptions& options) {
  text::validate_params(p);
  const planner::TextShape shape = planner::text_shape_of(p, types.q, types.kv, types.kv_len_on_gpu);
  return planner::plan_with_tuning<Plan>(caps, PlanFamily::text, text::tune_bucket(shape), options,
                                         [&](const PlanOptions& o) {
                                           return to_plan(planner::plan_text(caps, shape, o), caps, p, types);
                                         });
}

namespace text {

uint32_t layout_code(KvLayout l) {
  switch (l) {
    case KvLayout::ring: return TEXT_LAYOUT_RING;
    case KvLayout::paged: return TEXT_LAYOUT_PAGED;
    case KvLayout::tiered: return TEXT_LAYOUT_TIERED;
    default: return TEXT_LAYOUT_CONTIGUOUS;
  }
}

std::string tune_bucket(const planner::TextShape& s) {
  return fmt::format("{} q={} kv={} b={} h={} hkv={} d={} s={} l={}", to_string(s.phase()), to_string(s.q),
                     to_string(s.kv), pow2_ceil(s.batch), s.num_heads, s.num_kv_heads, s.head_dim,
                     pow2_ceil(s.seq_len), pow2_ceil(s.kv_len_max()));
}

const planner::CachedPlan& cached_plan(vk::Runtime& rt, const TextAttentionParams& p, const TextTensorTypes& types,
                                       const PlanOptions& options) {
  return ops::cached_or_planned(
      plan_key(rt.id(), p, types, options), rt, [&] { return plan_text(rt.caps(), p, types, options); },
      [](const PlanDispatch&) { return vk::ShaderInterface{TEXT_BINDINGS, sizeof(TextPush)}; });
}

}  // namespace text
}  // namespace vkattn

#include "ops/text/text_plan.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "ops/plan_check.hpp"
#include "ops/recording.hpp"
#include "ops/text/text_validate.hpp"
#include "planner/geometry_rules.hpp"
#include "planner/selection.hpp"
#include "planner/split_grid.hpp"
#include "planner/tune_cache.hpp"
#include "shaders/text_attention_interface.h"
#include "vk/runtime.hpp"
#include "vkattn/error.hpp"
#include "vkattn/plan.hpp"

namespace vkattn {

// The push constants are 29 words in GLSL's std430 layout; the C++ mirror must match.
static_assert(sizeof(text::TextPush) == 29 * 4, "TextPush must mirror the GLSL push-constant block");

namespace {

// The public plan of the planner's choice: specialization constants, grids and scratch.
Plan to_plan(const planner::TextPlan& tp, const DeviceCaps& caps, const TextAttentionParams& p,
             const TextTensorTypes& types) {
  const planner::TextGeometry& g = tp.geometry;
  Plan plan = planner::public_view(tp);

  // One split needs no reduce: the kernel normalises and writes the output itself.
  const bool split = tp.variant->kind == planner::Kind::split && g.splits > 1;
  const bool last_combines =
      split && tp.variant->last_split_combines && !types.indirect && planner::last_split_combines(g, p.head_dim, g.splits);
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
  spec[TEXT_SC_SPLIT] = !split ? TEXT_SPLIT_NONE : last_combines ? TEXT_SPLIT_LAST_COMBINES : TEXT_SPLIT_PARTIALS;
  spec[TEXT_SC_ACC_CHUNKS] = g.acc_chunks;
  spec[TEXT_SC_SUBGROUP_SIZE] = caps.subgroup_size;
  spec[TEXT_SC_KEY_LANES] = g.key_lanes;
  spec[TEXT_SC_KV_GROUP] = is_quantized(types.kv) ? p.kv_quant_group : 0;
  spec[TEXT_SC_KV_STAGES] = g.kv_stages;
  ops::add_decoder_dispatches(plan, std::move(attention), caps,
                              {p.batch, p.seq_len, p.num_heads, p.num_kv_heads, p.head_dim, g.q_pos, g.head_group,
                               split ? g.splits : 1, types.out, last_combines});
  if (last_combines) plan.reason += "; the last split of each row combines the partials (no reduce dispatch)";
  return plan;
}

// A plan depends on the lengths only through the longest one a replay can
// read (TextShape::kv_len_max), so recordings whose lengths come from a GPU
// buffer share one entry whatever host hint they pass; and on that length only
// through the split counts (constant per split_length_bucket) and the tuning
// bucket (its power of two), so a decode whose host length grows re-plans once
// per bucket, not once per token.
planner::PlanKey plan_key(uint64_t device, const TextAttentionParams& p, const TextTensorTypes& types,
                          const PlanOptions& options) {
  const uint32_t longest = planner::text_shape_of(p, types.q, types.kv, types.kv_len_on_gpu).kv_len_max();
  // Layout (tiered: and the cold tier's), dtypes, quantization group and
  // by-address reads choose specialization constants or the module.
  return planner::plan_key(device, PlanFamily::text,
                           {p.batch, p.seq_len, p.num_heads, p.num_kv_heads, p.head_dim,
                            planner::split_length_bucket(longest), planner::ceil_pow2(longest), uint32_t(p.layout),
                            uint32_t(p.slot_layout()), uint32_t(types.q), uint32_t(types.kv), uint32_t(types.out),
                            is_quantized(types.kv) ? p.kv_quant_group : 0, uint32_t(types.kv_by_address),
                            uint32_t(types.indirect)},
                           options);
}

}  // namespace

TextTensorTypes text_tensor_types(const TextAttentionTensors& t, const DeviceCaps& caps) {
  return {t.q.dtype(), t.k.dtype(), t.out.dtype(), t.kv_len.valid(), text::kv_by_address(t, caps), t.indirect.valid()};
}

Plan plan_text(const DeviceCaps& caps, const TextAttentionParams& p, const TextTensorTypes& types,
               const PlanOptions& options) {
  text::validate_params(p);
  planner::TextShape shape = planner::text_shape_of(p, types.q, types.kv, types.kv_len_on_gpu);
  shape.out = types.out;
  shape.kv_by_address = types.kv_by_address;
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
                     to_string(s.kv), planner::ceil_pow2(s.batch), s.num_heads, s.num_kv_heads, s.head_dim,
                     planner::ceil_pow2(s.seq_len), planner::ceil_pow2(s.kv_len_max()));
}

const planner::CachedPlan& cached_plan(vk::Runtime& rt, const TextAttentionParams& p, const TextTensorTypes& types,
                                       const PlanOptions& options) {
  return ops::cached_or_planned(
      plan_key(rt.id(), p, types, options), rt, [&] { return plan_text(rt.caps(), p, types, options); },
      [](const PlanDispatch&) { return vk::ShaderInterface{TEXT_BINDINGS, sizeof(TextPush)}; });
}

}  // namespace text
}  // namespace vkattn

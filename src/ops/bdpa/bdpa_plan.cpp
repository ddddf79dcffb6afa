#include "ops/bdpa/bdpa_plan.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "ops/bdpa/bdpa_validate.hpp"
#include "ops/dtype_code.hpp"
#include "ops/plan_check.hpp"
#include "ops/recording.hpp"
#include "planner/geometry_rules.hpp"
#include "planner/split_grid.hpp"
#include "planner/tune_cache.hpp"
#include "shaders/bdpa_interface.h"
#include "shaders/text_attention_interface.h"
#include "vk/runtime.hpp"
#include "vkattn/plan.hpp"

namespace vkattn {

namespace {

// The public plan of the planner's choice: specialization constants, grids and scratch.
Plan to_plan(const planner::BdpaPlan& bp, const DeviceCaps& caps, const BdpaParams& p, const BdpaTensorTypes& types) {
  const planner::BdpaGeometry& g = bp.geometry;
  Plan plan = planner::public_view(bp);
  // One split needs no reduce: the kernel normalises and writes the output itself.
  const bool split = bp.variant->split && g.splits > 1;
  plan.geometry.splits = split ? g.splits : 1;

  PlanDispatch attention;
  attention.module = bp.variant->module;
  auto& spec = attention.spec_constants;
  spec.assign(BDPA_SC_COUNT, 0);
  spec[BDPA_SC_HEAD_DIM] = p.head_dim;
  spec[BDPA_SC_WG_SIZE] = g.workgroup_size;
  spec[BDPA_SC_Q_POS] = g.q_pos;
  spec[BDPA_SC_HEAD_GROUP] = g.head_group;
  spec[BDPA_SC_TILE_KEYS] = g.tile_keys;
  spec[BDPA_SC_Q_TYPE] = dtype_code(types.q);
  spec[BDPA_SC_BASIS_TYPE] = dtype_code(types.basis);
  spec[BDPA_SC_O_TYPE] = dtype_code(types.out);
  spec[BDPA_SC_SPLIT] = split ? 1 : 0;
  spec[BDPA_SC_ACC_CHUNKS] = g.acc_chunks;
  spec[BDPA_SC_PAIRING] = p.pairing == RopePairing::interleaved ? BDPA_ROPE_INTERLEAVED : BDPA_ROPE_ROTATE_HALF;
  ops::add_decoder_dispatches(plan, std::move(attention), caps,
                              {p.batch, p.seq_len, p.num_heads, p.num_kv_heads, p.head_dim, g.q_pos, g.head_group,
                               plan.geometry.splits, types.out});
  return plan;
}

}  // namespace

BdpaTensorTypes bdpa_tensor_types(const BdpaTensors& t) {
  return {t.q.dtype(), t.basis_k.dtype(), t.out.dtype(), t.kv_len.valid()};
}

Plan plan_bdpa(const DeviceCaps& caps, const BdpaParams& p, const BdpaTensorTypes& types,
               const PlanOptions& options) {
  bdpa::validate_params(p);
  const planner::BdpaShape shape = bdpa::shape_of(p, types);
  return planner::plan_with_tuning<Plan>(caps, PlanFamily::bdpa, bdpa::tune_bucket(shape), options,
                                         [&](const PlanOptions& o) {
                                           return to_plan(planner::plan_bdpa(caps, shape, o), caps, p, types);
                                         });
}

namespace bdpa {

planner::BdpaShape shape_of(const BdpaParams& p, const BdpaTensorTypes& types) {
  planner::BdpaShape s{p.batch, p.seq_len, p.num_heads, p.num_kv_heads, p.head_dim, 0, types.q, types.basis};
  s.kv_len = types.kv_len_on_gpu ? p.kv_capacity : *std::max_element(p.kv_len.begin(), p.kv_len.end());
  return s;
}

std::string tune_bucket(const planner::BdpaShape& s) {
  return fmt::format("{} q={} basis={} b={} h={} hkv={} d={} s={} l={}", to_string(s.phase()), to_string(s.q),
                     to_string(s.basis), planner::ceil_pow2(s.batch), s.num_heads, s.num_kv_heads, s.head_dim,
                     planner::ceil_pow2(s.seq_len), planner::ceil_pow2(s.kv_len));
}

const planner::CachedPlan& cached_plan(vk::Runtime& rt, const BdpaParams& p, const BdpaTensorTypes& types,
                                       const PlanOptions& options) {
  // The plan depends on the lengths only through the split count (constant per
  // split_length_bucket) and the tuning bucket (a power of two), like text's.
  const uint32_t longest = shape_of(p, types).kv_len;
  const auto key = planner::plan_key(
      rt.id(), PlanFamily::bdpa,
      {p.batch, p.seq_len, p.num_heads, p.num_kv_heads, p.head_dim, planner::split_length_bucket(longest),
       planner::ceil_pow2(longest), uint32_t(p.pairing), uint32_t(types.q), uint32_t(types.basis),
       uint32_t(types.out)},
      options);
  return ops::cached_or_planned(key, rt, [&] { return plan_bdpa(rt.caps(), p, types, options); },
                                [](const PlanDispatch& d) {
                                  return d.module == "text_split_reduce"
                                             ? vk::ShaderInterface{TEXT_BINDINGS, sizeof(text::TextPush)}
                                             : vk::ShaderInterface{BDPA_BINDINGS, sizeof(BdpaPush)};
                                });
}

}  // namespace bdpa
}  // namespace vkattn

#include "ops/vision/vision_plan.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "ops/dtype_code.hpp"
#include "ops/plan_check.hpp"
#include "ops/vision/vision_fragments.hpp"
#include "planner/tune_cache.hpp"
#include "planner/vision_planner.hpp"
#include "shaders/text_attention_interface.h"
#include "shaders/vision_interface.h"
#include "vk/runtime.hpp"
#include "vkattn/plan.hpp"

namespace vkattn {

// text_common.glsl decodes the vision kernels' words by the text dtype codes.
static_assert(sizeof(vision::VisionPush) == 4 * 4, "VisionPush must mirror the GLSL push-constant block");
static_assert(sizeof(vision::TransposePush) == 4 * 4, "TransposePush must mirror the GLSL push-constant block");

namespace {

// [A, B, words] -> [B, A, words] (uvec4 words). The shader strides over the
// words, so the grid is capped well inside every device's limit.
PlanDispatch transpose(uint32_t a, uint32_t b, uint32_t words) {
  const uint64_t total = uint64_t(a) * b * words;
  PlanDispatch d;
  d.module = "vision_transpose";
  d.grid[0] = static_cast<uint32_t>(std::min<uint64_t>((total + VIS_TRANSPOSE_WG - 1) / VIS_TRANSPOSE_WG, 4096));
  return d;
}

Plan to_plan(const planner::VisionPlan& vp, const DeviceCaps& caps, const VisionAttentionParams& p,
             const VisionTensorTypes& types) {
  const planner::VisionVariant& v = *vp.variant;
  const planner::VisionGeometry& g = vp.geometry;
  Plan plan = planner::public_view(vp);
  if (planner::runs_text_engine(v.kind)) {
    plan.dispatches.push_back(vision::fragments_dispatch(vp, caps, p, types));
    return plan;
  }
  // The head-major variant runs on HPD copies of PHD tensors.
  const bool transposed = v.head_major && p.layout == VisionLayout::phd;

  PlanDispatch attention;
  attention.module = v.module;
  attention.required_subgroup_size = g.required_subgroup_size;
  auto& spec = attention.spec_constants;
  spec.assign(VIS_SC_COUNT, 0);
  spec[VIS_SC_HEAD_DIM] = p.head_dim;
  spec[VIS_SC_WG_SIZE] = g.workgroup_size;
  spec[VIS_SC_QUERIES] = g.queries;
  spec[VIS_SC_TILE] = g.tile;
  spec[VIS_SC_IN_TYPE] = dtype_code(types.in);
  spec[VIS_SC_OUT_TYPE] = dtype_code(types.out);
  spec[VIS_SC_LAYOUT] = (transposed || p.layout == VisionLayout::hpd) ? VIS_LAYOUT_HPD : VIS_LAYOUT_PHD;
  spec[VIS_SC_KIND] = v.kind == planner::VisionKind::reference ? VIS_KIND_REFERENCE : VIS_KIND_FLASH;
  spec[VIS_SC_F16_SHARED] = v.f16_shared ? 1 : 0;
  spec[VIS_SC_ACC_CHUNKS] = g.acc_chunks;
  if (v.kind == planner::VisionKind::reference) {
    const uint64_t rows = uint64_t(p.patches) * p.num_heads;
    attention.grid[0] = static_cast<uint32_t>((rows + g.workgroup_size - 1) / g.workgroup_size);
  } else {
    attention.grid[0] = (p.patches + g.queries - 1) / g.queries;
    attention.grid[1] = p.num_heads;
  }
  if (!transposed) {
    plan.dispatches.push_back(std::move(attention));
    return plan;
  }
  const uint32_t in_words = p.head_dim / (types.in == DType::f16 ? 8 : 4);
  const uint32_t out_words = p.head_dim / (types.out == DType::f16 ? 8 : 4);
  for (int i = 0; i < 3; ++i) plan.dispatches.push_back(transpose(p.patches, p.num_heads, in_words));  // Q, K, V
  plan.dispatches.push_back(std::move(attention));
  plan.dispatches.push_back(transpose(p.num_heads, p.patches, out_words));
  const uint64_t rows = uint64_t(p.patches) * p.num_heads * p.head_dim;
  plan.scratch_bytes = 3 * rows * dtype_bits(types.in) / 8 + rows * dtype_bits(types.out) / 8;
  return plan;
}

}  // namespace

VisionTensorTypes vision_tensor_types(const VisionAttentionTensors& t) { return {t.q.dtype(), t.out.dtype()}; }

Plan plan_vision(const DeviceCaps& caps, const VisionAttentionParams& p, const VisionTensorTypes& types,
                 const PlanOptions& options) {
  const planner::VisionShape shape{p.patches, p.num_heads, p.head_dim, types.in, p.layout};
  return planner::plan_with_tuning<Plan>(caps, PlanFamily::vision, vision::tune_bucket(p, types), options,
                                         [&](const PlanOptions& o) {
                                           return to_plan(planner::plan_vision(caps, shape, o), caps, p, types);
                                         });
}

namespace vision {

std::string tune_bucket(const VisionAttentionParams& p, const VisionTensorTypes& types) {
  return fmt::format("{} out={} {} p={} h={} d={}", to_string(types.in), to_string(types.out), to_string(p.layout),
                     p.patches, p.num_heads, p.head_dim);
}

const planner::CachedPlan& cached_plan(vk::Runtime& rt, const VisionAttentionParams& p, const VisionTensorTypes& types,
                                       const PlanOptions& options) {
  const auto key = planner::plan_key(
      rt.id(), PlanFamily::vision,
      {p.patches, p.num_heads, p.head_dim, uint32_t(p.layout), uint32_t(types.in), uint32_t(types.out)}, options);
  return ops::cached_or_planned(key, rt, [&] { return plan_vision(rt.caps(), p, types, options); },
                                [](const PlanDispatch& d) {
                                  if (on_text_engine(d)) return vk::ShaderInterface{TEXT_BINDINGS, sizeof(text::TextPush)};
                                  return d.module == "vision_transpose"
                                             ? vk::ShaderInterface{VIS_TRANSPOSE_BINDINGS, sizeof(TransposePush)}
                                             : vk::ShaderInterface{VIS_BINDINGS, sizeof(VisionPush)};
                                });
}

}  // namespace vision
}  // namespace vkattn

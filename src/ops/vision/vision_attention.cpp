// Vision attention: validate -> plan -> cached pipeline -> bind -> record.
#include <fmt/format.h>

#include <array>
#include <cmath>

#include "ops/vision/vision_fragments.hpp"
#include "ops/vision/vision_validate.hpp"
#include "ops/plan_check.hpp"
#include "ops/vision/vision_plan.hpp"
#include "shaders/vision_interface.h"
#include "vk/recorder_impl.hpp"
#include "vk/runtime.hpp"
#include "vkattn/context.hpp"
#include "vkattn/error.hpp"
#include "vkattn/plan.hpp"
#include "vkattn/recorder.hpp"
#include "vkattn/vision.hpp"

namespace vkattn {

namespace {

// Records [A, B, words] -> [B, A, words] (uvec4 words) with the plan's transpose dispatch.
void record_transpose(vk::RecorderImpl& rec, const vk::Pipeline& pipe, const PlanDispatch& d, const vk::BufferRef& src,
                      const vk::BufferRef& dst, uint32_t a, uint32_t b, uint32_t words) {
  vision::TransposePush push{a, b, words, 0};
  std::array<vk::BufferRef, VIS_TRANSPOSE_BINDINGS> buffers{};
  buffers[VIS_TRANSPOSE_BIND_SRC] = {src.buffer, src.offset, src.range, vk::Access::read};
  buffers[VIS_TRANSPOSE_BIND_DST] = {dst.buffer, dst.offset, dst.range, vk::Access::write};
  rec.dispatch(pipe, buffers, std::as_bytes(std::span(&push, 1)), d.grid[0], d.grid[1], d.grid[2]);
}

// Records a plan already checked against this call and device, with its pipelines.
VisionCallInfo record_checked(vk::RecorderImpl& rec, vk::Runtime& rt, const planner::CachedPlan& cached,
                              const VisionAttentionParams& p, const VisionAttentionTensors& t) {
  const Plan& plan = cached.plan;
  if (vision::on_text_engine(plan.dispatches[0])) {
    vision::record_fragments(rec, rt, *cached.pipelines[0], plan.dispatches[0], p, t);
    return {plan.variant, plan.reason, plan.warnings, 1};
  }
  const bool transpose = plan.dispatches.size() > 1;
  const size_t main = transpose ? vision::kTransposedAttention : 0;

  std::array<vk::BufferRef, VIS_BINDINGS> buffers{};
  buffers[VIS_BIND_Q] = vk::ref(t.q, vk::Access::read);
  buffers[VIS_BIND_K] = vk::ref(t.k, vk::Access::read);
  buffers[VIS_BIND_V] = vk::ref(t.v, vk::Access::read);
  buffers[VIS_BIND_O] = vk::ref(t.out, vk::Access::write);

  VisionCallInfo info{plan.variant, plan.reason, plan.warnings, uint32_t(plan.dispatches.size())};
  const uint32_t in_words = p.head_dim / (t.q.dtype() == DType::f16 ? 8 : 4);
  const uint32_t out_words = p.head_dim / (t.out.dtype() == DType::f16 ? 8 : 4);
  if (transpose) {
    for (int i : {VIS_BIND_Q, VIS_BIND_K, VIS_BIND_V}) {
      vk::BufferRef hpd = rec.scratch(buffers[i].range);
      record_transpose(rec, *cached.pipelines[i], plan.dispatches[i], buffers[i], hpd, p.patches, p.num_heads,
                       in_words);
      buffers[i] = {hpd.buffer, hpd.offset, hpd.range, vk::Access::read};
    }
    vk::BufferRef hpd_out = rec.scratch(t.out.bytes());
    buffers[VIS_BIND_O] = {hpd_out.buffer, hpd_out.offset, hpd_out.range, vk::Access::write};
  }

  vision::VisionPush push{p.patches, p.num_heads, p.effective_scale(), 0};
  const uint32_t* grid = plan.dispatches[main].grid;
  rec.dispatch(*cached.pipelines[main], buffers, std::as_bytes(std::span(&push, 1)), grid[0], grid[1], grid[2]);
  if (transpose) {
    vk::BufferRef hpd_out = buffers[VIS_BIND_O];
    hpd_out.access = vk::Access::read;
    record_transpose(rec, *cached.pipelines[main + 1], plan.dispatches[main + 1], hpd_out,
                     vk::ref(t.out, vk::Access::write), p.num_heads, p.patches, out_words);
  }
  return info;
}

}  // namespace

std::string_view to_string(VisionLayout l) { return l == VisionLayout::phd ? "phd" : "hpd"; }

VisionLayout vision_layout_from_string(std::string_view name) {
  if (name == "phd") return VisionLayout::phd;
  if (name == "hpd") return VisionLayout::hpd;
  throw Error(ErrorKind::invalid_argument, fmt::format("layout: expected phd or hpd, got '{}'", name));
}

float VisionAttentionParams::effective_scale() const {
  return scale ? *scale : 1.0f / std::sqrt(static_cast<float>(head_dim));
}

VisionCallInfo record(Recorder& recorder, const Plan& plan, const VisionAttentionParams& p,
                      const VisionAttentionTensors& t) {
  vk::Runtime& rt = recorder.context().runtime();
  vision::validate(p, t, rt.caps());
  const VisionTensorTypes types = vision_tensor_types(t);
  return ops::record_from_plan<VisionCallInfo>(
      plan, PlanFamily::vision, rt.caps(),
      [&](const PlanOptions& o) -> const planner::CachedPlan& { return vision::cached_plan(rt, p, types, o); },
      [&](const planner::CachedPlan& c) { return record_checked(recorder.impl(), rt, c, p, t); });
}

VisionCallInfo vision_attention(Recorder& recorder, const VisionAttentionParams& p, const VisionAttentionTensors& t,
                                const PlanOptions& options) {
  vk::Runtime& rt = recorder.context().runtime();
  vision::validate(p, t, rt.caps());
  return record_checked(recorder.impl(), rt, vision::cached_plan(rt, p, vision_tensor_types(t), options), p, t);
}

VisionCallInfo vision_attention(Recorder& rec, const VisionAttentionParams& p, const VisionAttentionTensors& t) {
  return vision_attention(rec, p, t, PlanOptions{});
}

}  // namespace vkattn

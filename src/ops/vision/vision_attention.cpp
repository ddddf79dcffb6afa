// Vision attention: validate -> plan -> cached pipeline -> bind -> record.
#include <fmt/format.h>

#include <array>
#include <cmath>

#include "ops/vision/vision_fragments.hpp"
#include "ops/vision/vision_validate.hpp"
#include "planner/vision_planner.hpp"
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

uint32_t dt_code(DType t) { return t == DType::f16 ? VIS_DT_F16 : VIS_DT_F32; }

// Records [A, B, words] -> [B, A, words] (uvec4 words).
void record_transpose(vk::RecorderImpl& rec, vk::Runtime& rt, const vk::BufferRef& src, const vk::BufferRef& dst,
                      uint32_t a, uint32_t b, uint32_t words) {
  const vk::ShaderInterface iface{VIS_TRANSPOSE_BINDINGS, sizeof(vision::TransposePush)};
  const vk::Pipeline& pipe = rt.pipelines().get({"vision_transpose", {}, 0}, iface);
  vision::TransposePush push{a, b, words, 0};
  std::array<vk::BufferRef, VIS_TRANSPOSE_BINDINGS> buffers{};
  buffers[VIS_TRANSPOSE_BIND_SRC] = {src.buffer, src.offset, src.range, vk::Access::read};
  buffers[VIS_TRANSPOSE_BIND_DST] = {dst.buffer, dst.offset, dst.range, vk::Access::write};
  const uint64_t total = uint64_t(a) * b * words;
  // The shader strides over the words, so the grid is capped well inside every device's limit.
  const uint32_t groups = static_cast<uint32_t>(std::min<uint64_t>((total + VIS_TRANSPOSE_WG - 1) / VIS_TRANSPOSE_WG,
                                                                   4096));
  rec.dispatch(pipe, buffers, std::as_bytes(std::span(&push, 1)), groups, 1, 1);
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

VisionCallInfo vision_attention(Recorder& recorder, const VisionAttentionParams& p, const VisionAttentionTensors& t,
                                const PlanOptions& options) {
  vk::RecorderImpl& rec = recorder.impl();
  vk::Runtime& rt = recorder.context().runtime();
  const DeviceCaps& caps = rt.caps();
  vision::validate(p, t, caps);

  const planner::VisionShape shape{p.patches, p.num_heads, p.head_dim, t.q.dtype(), p.layout};
  const planner::VisionPlan plan = planner::plan_vision(caps, shape, options);
  const planner::VisionVariant& v = *plan.variant;
  const planner::VisionGeometry& g = plan.geometry;
  if (v.kind == planner::VisionKind::fragments) {
    vision::record_fragments(rec, rt, p, t, plan);
    return {v.name, plan.reason, plan.warnings, 1};
  }
  // The head-major variant runs on HPD copies of PHD tensors.
  const bool transpose = v.head_major && p.layout == VisionLayout::phd;

  std::vector<uint32_t> spec(VIS_SC_COUNT, 0);
  spec[VIS_SC_HEAD_DIM] = p.head_dim;
  spec[VIS_SC_WG_SIZE] = g.workgroup_size;
  spec[VIS_SC_QUERIES] = g.queries;
  spec[VIS_SC_TILE] = g.tile;
  spec[VIS_SC_IN_TYPE] = dt_code(t.q.dtype());
  spec[VIS_SC_OUT_TYPE] = dt_code(t.out.dtype());
  spec[VIS_SC_LAYOUT] = (transpose || p.layout == VisionLayout::hpd) ? VIS_LAYOUT_HPD : VIS_LAYOUT_PHD;
  spec[VIS_SC_KIND] = v.kind == planner::VisionKind::reference ? VIS_KIND_REFERENCE : VIS_KIND_FLASH;
  spec[VIS_SC_F16_SHARED] = v.f16_shared ? 1 : 0;
  spec[VIS_SC_ACC_CHUNKS] = g.acc_chunks;
  const vk::ShaderInterface iface{VIS_BINDINGS, sizeof(vision::VisionPush)};
  const vk::Pipeline& pipeline = rt.pipelines().get({v.module, spec, g.required_subgroup_size}, iface);

  std::array<vk::BufferRef, VIS_BINDINGS> buffers{};
  buffers[VIS_BIND_Q] = vk::ref(t.q, vk::Access::read);
  buffers[VIS_BIND_K] = vk::ref(t.k, vk::Access::read);
  buffers[VIS_BIND_V] = vk::ref(t.v, vk::Access::read);
  buffers[VIS_BIND_O] = vk::ref(t.out, vk::Access::write);

  VisionCallInfo info{v.name, plan.reason, plan.warnings, 1};
  const uint32_t in_words = p.head_dim / (t.q.dtype() == DType::f16 ? 8 : 4);
  const uint32_t out_words = p.head_dim / (t.out.dtype() == DType::f16 ? 8 : 4);
  if (transpose) {
    for (int i : {VIS_BIND_Q, VIS_BIND_K, VIS_BIND_V}) {
      vk::BufferRef hpd = rec.scratch(buffers[i].range);
      record_transpose(rec, rt, buffers[i], hpd, p.patches, p.num_heads, in_words);
      buffers[i] = {hpd.buffer, hpd.offset, hpd.range, vk::Access::read};
    }
    vk::BufferRef hpd_out = rec.scratch(t.out.bytes());
    buffers[VIS_BIND_O] = {hpd_out.buffer, hpd_out.offset, hpd_out.range, vk::Access::write};
    info.dispatches = 5;
  }

  vision::VisionPush push{p.patches, p.num_heads, p.effective_scale(), 0};
  const auto push_bytes = std::as_bytes(std::span(&push, 1));
  if (v.kind == planner::VisionKind::reference) {
    const uint64_t rows = uint64_t(p.patches) * p.num_heads;
    rec.dispatch(pipeline, buffers, push_bytes, static_cast<uint32_t>((rows + g.workgroup_size - 1) / g.workgroup_size),
                 1, 1);
  } else {
    rec.dispatch(pipeline, buffers, push_bytes, (p.patches + g.queries - 1) / g.queries, p.num_heads, 1);
  }
  if (transpose) {
    vk::BufferRef hpd_out = buffers[VIS_BIND_O];
    hpd_out.access = vk::Access::read;
    record_transpose(rec, rt, hpd_out, vk::ref(t.out, vk::Access::write), p.num_heads, p.patches, out_words);
  }
  return info;
}

VisionCallInfo vision_attention(Recorder& rec, const VisionAttentionParams& p, const VisionAttentionTensors& t) {
  return vision_attention(rec, p, t, PlanOptions{});
}

}  // namespace vkattn

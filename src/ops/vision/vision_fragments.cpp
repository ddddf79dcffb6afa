#include "ops/vision/vision_fragments.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <iterator>

#include "ops/text/text_validate.hpp"
#include "shaders/text_attention_interface.h"
#include "vkattn/error.hpp"

namespace vkattn::vision {

bool on_text_engine(const PlanDispatch& d) {
  return d.module.starts_with("flash_coopmat") || d.module.starts_with("flash_workgroup");
}

PlanDispatch fragments_dispatch(const planner::VisionPlan& plan, const DeviceCaps& caps, const VisionAttentionParams& p,
                                const VisionTensorTypes& types) {
  const planner::VisionGeometry& g = plan.geometry;
  const uint32_t groups = (p.patches + g.queries - 1) / g.queries;
  if (groups > caps.max_workgroup_count[0] || p.num_heads > caps.max_workgroup_count[1])
    throw Error(ErrorKind::unsupported,
                fmt::format("workgroups: expected at most [{}, {}] (device limit), got [{}, {}] for this shape",
                            caps.max_workgroup_count[0], caps.max_workgroup_count[1], groups, p.num_heads));
  PlanDispatch d;
  d.module = plan.variant->module;
  d.required_subgroup_size = g.required_subgroup_size;
  auto& spec = d.spec_constants;
  spec.assign(TEXT_SC_COUNT, 0);
  spec[TEXT_SC_HEAD_DIM] = p.head_dim;
  spec[TEXT_SC_WG_SIZE] = g.workgroup_size;
  spec[TEXT_SC_Q_POS] = g.queries;
  spec[TEXT_SC_HEAD_GROUP] = 1;
  spec[TEXT_SC_TILE_KEYS] = g.tile;
  spec[TEXT_SC_Q_TYPE] = dtype_code(types.in);
  spec[TEXT_SC_KV_TYPE] = dtype_code(types.in);  // K and V take Q's dtype
  spec[TEXT_SC_O_TYPE] = dtype_code(types.out);
  spec[TEXT_SC_LAYOUT] = TEXT_LAYOUT_CONTIGUOUS;
  spec[TEXT_SC_KV_STAGES] = g.kv_stages;
  d.grid[0] = groups;
  d.grid[1] = p.num_heads;
  return d;
}

void record_fragments(vk::RecorderImpl& rec, vk::Runtime& rt, const vk::Pipeline& pipeline, const PlanDispatch& d,
                      const VisionAttentionParams& p, const VisionAttentionTensors& t) {
  // Element strides of (sequence, patch, head); validation keeps P x H x D below 2^32.
  const uint32_t row = p.head_dim, patches_row = p.num_heads * p.head_dim, head_rows = p.patches * p.head_dim;
  const bool phd = p.layout == VisionLayout::phd;
  const uint32_t strides[3] = {p.patches * patches_row, phd ? patches_row : row, phd ? row : head_rows};
  text::TextPush push{};
  push.batch = 1;
  push.seq_len = p.patches;
  push.num_heads = push.num_kv_heads = p.num_heads;
  push.capacity = p.patches;
  push.kv_len = p.patches;  // bidirectional: every patch sees every patch (no flags, no window)
  push.scale = p.effective_scale();
  push.num_splits = 1;
  for (auto* dst : {push.q_strides, push.k_strides, push.v_strides, push.o_strides})
    std::copy(std::begin(strides), std::end(strides), dst);

  // The bindings a text call would give lengths, positions, pages and splits stay placeholders.
  const vk::BufferRef placeholder{rt.placeholder_buffer(), 0, 64, vk::Access::read};
  std::array<vk::BufferRef, TEXT_BINDINGS> buffers{};
  buffers.fill(placeholder);
  buffers[TEXT_BIND_Q] = vk::ref(t.q, vk::Access::read);
  buffers[TEXT_BIND_K] = vk::ref(t.k, vk::Access::read);
  buffers[TEXT_BIND_V] = vk::ref(t.v, vk::Access::read);
  buffers[TEXT_BIND_O] = vk::ref(t.out, vk::Access::write);
  rec.dispatch(pipeline, buffers, std::as_bytes(std::span(&push, 1)), d.grid[0], d.grid[1], d.grid[2]);
}

}  // namespace vkattn::vision

// BDPA attention: validate -> plan (the plan cache's, or the caller's, checked)
// -> bind -> record, then, for a split plan, text_split_reduce.comp over the
// partials (the same format the text kernels write).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "ops/bdpa/bdpa_plan.hpp"
#include "ops/bdpa/bdpa_validate.hpp"
#include "ops/plan_check.hpp"
#include "ops/recording.hpp"
#include "ops/text/text_validate.hpp"
#include "shaders/bdpa_interface.h"
#include "shaders/text_attention_interface.h"
#include "vk/recorder_impl.hpp"
#include "vk/runtime.hpp"
#include "vkattn/bdpa.hpp"
#include "vkattn/context.hpp"
#include "vkattn/error.hpp"
#include "vkattn/plan.hpp"
#include "vkattn/recorder.hpp"

namespace vkattn {

std::string_view to_string(RopePairing p) { return p == RopePairing::interleaved ? "interleaved" : "rotate_half"; }

RopePairing rope_pairing_from_string(std::string_view name) {
  for (RopePairing p : {RopePairing::rotate_half, RopePairing::interleaved})
    if (to_string(p) == name) return p;
  throw Error(ErrorKind::invalid_argument, fmt::format("rope: expected rotate_half or interleaved, got '{}'", name));
}

float BdpaParams::effective_scale() const { return scale ? *scale : 1.0f / std::sqrt(static_cast<float>(head_dim)); }

TextAttentionParams BdpaParams::contiguous_equivalent() const {
  TextAttentionParams tp;
  tp.batch = batch;
  tp.seq_len = seq_len;
  tp.num_heads = num_heads;
  tp.num_kv_heads = num_kv_heads;
  tp.head_dim = head_dim;
  tp.causal = causal;
  tp.window = window;
  tp.softcap = softcap;
  tp.scale = scale;
  tp.kv_capacity = kv_capacity;
  tp.kv_len = kv_len;
  tp.start_pos = start_pos;
  return tp;
}

void check_bdpa_index(const BdpaParams& p, const std::vector<uint32_t>& index) {
  const uint64_t want = uint64_t(p.batch) * p.kv_capacity * BDPA_INDEX_WORDS;
  if (index.size() != want)
    throw Error(ErrorKind::invalid_argument,
                fmt::format("index: expected batch x kv_capacity x {} = {} values, got {}", BDPA_INDEX_WORDS, want,
                            index.size()));
  for (uint32_t b = 0; b < p.batch; ++b) {
    for (uint32_t j = 0; j < p.kv_len_of(b) && j < p.kv_capacity; ++j) {
      const uint32_t* e = &index[(uint64_t(b) * p.kv_capacity + j) * BDPA_INDEX_WORDS];
      auto fail = [&](const char* what, const char* limit_name, uint32_t limit, uint32_t got) {
        throw Error(ErrorKind::invalid_argument,
                    fmt::format("index[{}][{}]: expected a {} below {} ({}), got {}", b, j, what, limit_name, limit,
                                got));
      };
      if (e[BDPA_INDEX_BASIS] >= p.num_basis) fail("basis row", "num_basis", p.num_basis, e[BDPA_INDEX_BASIS]);
      if (e[BDPA_INDEX_RESIDUAL] >= p.num_residual)
        fail("residual row", "num_residual", p.num_residual, e[BDPA_INDEX_RESIDUAL]);
      if (p.rotary_dim > 0 && e[BDPA_INDEX_POSITION] >= p.rope_positions)
        fail("position", "rope_positions", p.rope_positions, e[BDPA_INDEX_POSITION]);
    }
  }
}

namespace {

// Records a plan already checked against this call and device, with its pipelines.
TextCallInfo record_checked(vk::RecorderImpl& rec, vk::Runtime& rt, const planner::CachedPlan& cached,
                            const BdpaParams& p, const BdpaTensors& t) {
  const Plan& plan = cached.plan;
  const bool split = plan.dispatches.size() == 2;  // attention, then text_split_reduce
  // Every check that can reject the call comes before anything is recorded.
  const Shape qshape{p.batch, p.seq_len, p.num_heads, p.head_dim};
  const text::RowStrides qs = text::row_strides("q", t.q, qshape), os = text::row_strides("out", t.out, qshape);
  TextCallInfo info;
  info.variant = plan.variant;
  info.reason = plan.reason;
  info.warnings = plan.warnings;
  info.splits = plan.geometry.splits;
  std::copy(std::begin(plan.dispatches[0].grid), std::end(plan.dispatches[0].grid), info.workgroups);

  const VkBuffer placeholder = rt.placeholder_buffer();
  const vk::BufferRef none{placeholder, 0, 64, vk::Access::read};
  const ops::PerSequence kv_len = ops::per_sequence(rec, p.kv_len, t.kv_len, placeholder);
  const ops::PerSequence start_pos = ops::per_sequence(rec, p.start_pos, t.start_pos, placeholder);

  bdpa::BdpaPush push{};
  push.batch = p.batch;
  push.seq_len = p.seq_len;
  push.num_heads = p.num_heads;
  push.num_kv_heads = p.num_kv_heads;
  push.capacity = p.kv_capacity;
  push.num_basis = p.num_basis;
  push.num_residual = p.num_residual;
  push.flags = (p.causal ? BDPA_FLAG_CAUSAL : 0u) | (kv_len.from_buffer ? BDPA_FLAG_KV_LEN_BUFFER : 0u) |
               (start_pos.from_buffer ? BDPA_FLAG_START_POS_BUFFER : 0u);
  push.kv_len = kv_len.uniform;
  push.start_pos = start_pos.uniform;
  push.window = p.window;
  push.scale = p.effective_scale();
  push.softcap = p.softcap;
  push.num_splits = info.splits;
  push.rotary_dim = p.rotary_dim;
  push.rope_positions = p.rope_positions;
  std::copy(qs.begin(), qs.end(), push.q_strides);
  std::copy(os.begin(), os.end(), push.o_strides);

  const uint64_t rows = uint64_t(p.batch) * info.splits * p.seq_len * p.num_heads;
  vk::BufferRef partial_o = ops::unwritten_output(rec), partial_ml = partial_o;  // written only when split
  if (split) {
    partial_o = rec.scratch(rows * p.head_dim * 4);
    partial_ml = rec.scratch(rows * 8);
    partial_o.access = partial_ml.access = vk::Access::write;
  }
  std::array<vk::BufferRef, BDPA_BINDINGS> buffers{};
  buffers[BDPA_BIND_Q] = vk::ref(t.q, vk::Access::read);
  buffers[BDPA_BIND_BASIS_K] = vk::ref(t.basis_k, vk::Access::read);
  buffers[BDPA_BIND_BASIS_V] = vk::ref(t.basis_v, vk::Access::read);
  buffers[BDPA_BIND_RESIDUAL_K] = vk::ref(t.residual_k, vk::Access::read);
  buffers[BDPA_BIND_RESIDUAL_V] = vk::ref(t.residual_v, vk::Access::read);
  buffers[BDPA_BIND_SCALE_K] = vk::ref(t.residual_k_scale, vk::Access::read);
  buffers[BDPA_BIND_SCALE_V] = vk::ref(t.residual_v_scale, vk::Access::read);
  buffers[BDPA_BIND_INDEX] = vk::ref(t.index, vk::Access::read);
  buffers[BDPA_BIND_ROPE_COS] = p.rotary_dim ? vk::ref(t.rope_cos, vk::Access::read) : none;
  buffers[BDPA_BIND_ROPE_SIN] = p.rotary_dim ? vk::ref(t.rope_sin, vk::Access::read) : none;
  buffers[BDPA_BIND_O] = split ? ops::unwritten_output(rec) : vk::ref(t.out, vk::Access::write);
  buffers[BDPA_BIND_KV_LEN] = kv_len.buffer;
  buffers[BDPA_BIND_START_POS] = start_pos.buffer;
  buffers[BDPA_BIND_PARTIAL_O] = partial_o;
  buffers[BDPA_BIND_PARTIAL_ML] = partial_ml;
  rec.dispatch(*cached.pipelines[0], buffers, std::as_bytes(std::span(&push, 1)), info.workgroups[0],
               info.workgroups[1], info.workgroups[2]);
  if (!split) return info;

  // text_split_reduce reads the text push constants: the row counts, the split count and out's strides.
  text::TextPush rpush{};
  rpush.batch = p.batch;
  rpush.seq_len = p.seq_len;
  rpush.num_heads = p.num_heads;
  rpush.num_kv_heads = p.num_kv_heads;
  rpush.capacity = 1;
  rpush.num_splits = info.splits;
  std::copy(os.begin(), os.end(), rpush.o_strides);
  std::array<vk::BufferRef, TEXT_BINDINGS> rbuf;
  rbuf.fill(none);
  rbuf[TEXT_BIND_O] = vk::ref(t.out, vk::Access::write);
  partial_o.access = partial_ml.access = vk::Access::read;
  rbuf[TEXT_BIND_PARTIAL_O] = partial_o;
  rbuf[TEXT_BIND_PARTIAL_ML] = partial_ml;
  const uint32_t* grid = plan.dispatches[1].grid;
  rec.dispatch(*cached.pipelines[1], rbuf, std::as_bytes(std::span(&rpush, 1)), grid[0], grid[1], grid[2]);
  return info;
}

}  // namespace

TextCallInfo record(Recorder& recorder, const Plan& plan, const BdpaParams& p, const BdpaTensors& t) {
  vk::Runtime& rt = recorder.context().runtime();
  bdpa::validate_params(p);
  bdpa::validate_tensors(p, t, rt.caps());
  const BdpaTensorTypes types = bdpa_tensor_types(t);
  return ops::record_from_plan<TextCallInfo>(
      plan, PlanFamily::bdpa, rt.caps(),
      [&](const PlanOptions& o) -> const planner::CachedPlan& { return bdpa::cached_plan(rt, p, types, o); },
      [&](const planner::CachedPlan& c) { return record_checked(recorder.impl(), rt, c, p, t); });
}

TextCallInfo bdpa_attention(Recorder& recorder, const BdpaParams& p, const BdpaTensors& t,
                            const PlanOptions& options) {
  vk::Runtime& rt = recorder.context().runtime();
  bdpa::validate_params(p);
  bdpa::validate_tensors(p, t, rt.caps());
  return record_checked(recorder.impl(), rt, bdpa::cached_plan(rt, p, bdpa_tensor_types(t), options), p, t);
}

TextCallInfo bdpa_attention(Recorder& rec, const BdpaParams& p, const BdpaTensors& t) {
  return bdpa_attention(rec, p, t, PlanOptions{});
}

}  // namespace vkattn

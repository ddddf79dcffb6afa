// BDPA attention: validate -> plan -> cached pipeline -> bind -> record, then,
// for a split plan, text_split_reduce.comp over the partials (the same format
// the text kernels write).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "ops/bdpa/bdpa_validate.hpp"
#include "ops/recording.hpp"
#include "ops/text/text_validate.hpp"
#include "planner/bdpa_planner.hpp"
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

TextCallInfo bdpa_attention(Recorder& recorder, const BdpaParams& p, const BdpaTensors& t,
                            const PlanOptions& options) {
  vk::RecorderImpl& rec = recorder.impl();
  vk::Runtime& rt = recorder.context().runtime();
  const DeviceCaps& caps = rt.caps();
  bdpa::validate_params(p);
  bdpa::validate_tensors(p, t, caps);

  planner::BdpaShape shape{p.batch, p.seq_len, p.num_heads, p.num_kv_heads, p.head_dim, 0, t.q.dtype(),
                           t.basis_k.dtype()};
  // Lengths from the GPU: size the splits for the longest replay (the index capacity).
  shape.kv_len = t.kv_len.valid() ? p.kv_capacity : *std::max_element(p.kv_len.begin(), p.kv_len.end());
  const planner::BdpaPlan plan = planner::plan_bdpa(caps, shape, options);
  const planner::BdpaGeometry& g = plan.geometry;
  const bool split = plan.variant->split && g.splits > 1;

  std::vector<uint32_t> spec(BDPA_SC_COUNT, 0);
  spec[BDPA_SC_HEAD_DIM] = p.head_dim;
  spec[BDPA_SC_WG_SIZE] = g.workgroup_size;
  spec[BDPA_SC_Q_POS] = g.q_pos;
  spec[BDPA_SC_HEAD_GROUP] = g.head_group;
  spec[BDPA_SC_TILE_KEYS] = g.tile_keys;
  spec[BDPA_SC_Q_TYPE] = dtype_code(t.q.dtype());
  spec[BDPA_SC_BASIS_TYPE] = dtype_code(t.basis_k.dtype());
  spec[BDPA_SC_O_TYPE] = dtype_code(t.out.dtype());
  spec[BDPA_SC_SPLIT] = split ? 1 : 0;
  spec[BDPA_SC_ACC_CHUNKS] = g.acc_chunks;
  spec[BDPA_SC_PAIRING] = p.pairing == RopePairing::interleaved ? BDPA_ROPE_INTERLEAVED : BDPA_ROPE_ROTATE_HALF;
  const vk::Pipeline& pipeline =
      rt.pipelines().get({plan.variant->module, spec, 0}, {BDPA_BINDINGS, sizeof(bdpa::BdpaPush)});

  // Every check that can reject the call comes before anything is recorded.
  const Shape qshape{p.batch, p.seq_len, p.num_heads, p.head_dim};
  const text::RowStrides qs = text::row_strides("q", t.q, qshape), os = text::row_strides("out", t.out, qshape);
  TextCallInfo info;
  info.variant = plan.variant->name;
  info.reason = plan.reason;
  info.warnings = plan.warnings;
  info.splits = split ? g.splits : 1;
  const uint32_t gqa = p.num_heads / p.num_kv_heads;
  const uint64_t grid[3] = {(uint64_t(p.seq_len) + g.q_pos - 1) / g.q_pos,
                            uint64_t(p.num_kv_heads) * (gqa / g.head_group), uint64_t(p.batch) * info.splits};
  for (int i = 0; i < 3; ++i) {
    if (grid[i] > caps.max_workgroup_count[i])
      throw Error(ErrorKind::unsupported,
                  fmt::format("workgroups[{}]: expected at most {} (device limit), got {} for this shape", i,
                              caps.max_workgroup_count[i], grid[i]));
    info.workgroups[i] = static_cast<uint32_t>(grid[i]);
  }
  const uint64_t rows = uint64_t(p.batch) * info.splits * p.seq_len * p.num_heads;
  const uint64_t reduce_groups = uint64_t(p.seq_len) * p.num_heads;
  const vk::Pipeline* reduce = nullptr;
  if (split) reduce = &ops::split_reduce_pipeline(rt, p.head_dim, t.out.dtype(), rows, reduce_groups, p.batch);

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

  vk::BufferRef partial_o = none, partial_ml = none;
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
  buffers[BDPA_BIND_O] = split ? none : vk::ref(t.out, vk::Access::write);
  buffers[BDPA_BIND_KV_LEN] = kv_len.buffer;
  buffers[BDPA_BIND_START_POS] = start_pos.buffer;
  buffers[BDPA_BIND_PARTIAL_O] = partial_o;
  buffers[BDPA_BIND_PARTIAL_ML] = partial_ml;
  rec.dispatch(pipeline, buffers, std::as_bytes(std::span(&push, 1)), info.workgroups[0], info.workgroups[1],
               info.workgroups[2]);

  if (split) {
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
    rec.dispatch(*reduce, rbuf, std::as_bytes(std::span(&rpush, 1)), static_cast<uint32_t>(reduce_groups), p.batch, 1);
  }
  return info;
}

TextCallInfo bdpa_attention(Recorder& rec, const BdpaParams& p, const BdpaTensors& t) {
  return bdpa_attention(rec, p, t, PlanOptions{});
}

}  // namespace vkattn

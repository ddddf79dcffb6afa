// Text attention: validate -> plan -> cached pipeline -> bind -> record.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <limits>

#include "shaders/text_attention_interface.h"
#include "ops/recording.hpp"
#include "ops/text/text_validate.hpp"
#include "ops/plan_check.hpp"
#include "ops/text/text_plan.hpp"
#include "vk/recorder_impl.hpp"
#include "vk/runtime.hpp"
#include "vkattn/context.hpp"
#include "vkattn/error.hpp"
#include "vkattn/plan.hpp"
#include "vkattn/recorder.hpp"
#include "vkattn/text.hpp"

namespace vkattn {

namespace {

// -inf as an f32 bit pattern: the running max of a split no workgroup wrote.
constexpr uint32_t kNegativeInfinityBits = 0xff800000u;
static_assert(std::bit_cast<float>(kNegativeInfinityBits) == -std::numeric_limits<float>::infinity());

}  // namespace

void check_page_table(const TextAttentionParams& p, const std::vector<uint32_t>& table) {
  if (table.size() != uint64_t(p.batch) * p.max_pages)
    throw Error(ErrorKind::invalid_argument, fmt::format("page_table: expected batch x max_pages = {} entries, got {}",
                                                         uint64_t(p.batch) * p.max_pages, table.size()));
  for (uint32_t b = 0; b < p.batch; ++b) {
    // Only the pages that hold this sequence's keys must be valid.
    const uint64_t last = p.kv_len_of(b) ? (uint64_t(p.kv_start_of(b)) + p.kv_len_of(b) - 1) / p.kv_capacity : 0;
    const uint64_t first = p.kv_start_of(b) / p.kv_capacity;
    for (uint64_t i = first; p.kv_len_of(b) && i <= last && i < p.max_pages; ++i) {
      uint32_t page = table[b * p.max_pages + i];
      if (page >= p.num_pages)
        throw Error(ErrorKind::invalid_argument,
                    fmt::format("page_table[{}][{}]: expected a page index below num_pages ({}), got {}", b, i,
                                p.num_pages, page));
    }
  }
}

namespace {

// Records a plan already checked against this call and device, with its pipelines.
TextCallInfo record_checked(vk::RecorderImpl& rec, vk::Runtime& rt, const planner::CachedPlan& cached,
                            const TextAttentionParams& p, const TextAttentionTensors& t) {
  const Plan& plan = cached.plan;
  const uint32_t splits = plan.geometry.splits;
  // Partials of splits, then text_split_reduce or the last split to combine them.
  const uint32_t split_mode = plan.dispatches[0].spec_constants[TEXT_SC_SPLIT];
  const bool split = split_mode != TEXT_SPLIT_NONE;
  const bool reduce = split_mode == TEXT_SPLIT_PARTIALS;  // the plan's second dispatch
  // The plan's module reads K/V through device addresses exactly when these tensors need it (text_tensor_types).
  const bool by_address = text::kv_by_address(t, rt.caps());

  // Every check that can reject the call comes before anything is recorded.
  text::TextPush push{};
  {
    const Shape qshape{p.batch, p.seq_len, p.num_heads, p.head_dim};
    const Shape kvshape = text::kv_shape(p);
    auto put = [](uint32_t (&dst)[3], const text::RowStrides& s) { std::copy(s.begin(), s.end(), dst); };
    put(push.q_strides, text::row_strides("q", t.q, qshape));
    put(push.k_strides, text::row_strides("k", t.k, kvshape));
    put(push.v_strides, text::row_strides("v", t.v, kvshape));
    put(push.o_strides, text::row_strides("out", t.out, qshape));
  }
  TextCallInfo info;
  info.variant = plan.variant;
  info.reason = plan.reason;
  info.warnings = plan.warnings;
  info.splits = splits;
  std::copy(std::begin(plan.dispatches[0].grid), std::end(plan.dispatches[0].grid), info.workgroups);

  const VkBuffer placeholder = rt.placeholder_buffer();
  ops::PerSequence kv_len = ops::per_sequence(rec, p.kv_len, t.kv_len, placeholder);
  ops::PerSequence start_pos = ops::per_sequence(rec, p.start_pos, t.start_pos, placeholder);
  ops::PerSequence kv_start = ops::per_sequence(rec, p.kv_start, t.kv_start, placeholder);
  vk::BufferRef kv_addresses{placeholder, 0, 64, vk::Access::read};
  if (by_address) {
    const uint64_t k_at = rt.device_address(t.k.buffer()) + t.k.offset();
    const uint64_t v_at = rt.device_address(t.v.buffer()) + t.v.offset();
    const uint32_t words[4] = {uint32_t(k_at), uint32_t(k_at >> 32), uint32_t(v_at), uint32_t(v_at >> 32)};
    kv_addresses = rec.scratch(sizeof(words));
    rec.update(kv_addresses, std::as_bytes(std::span(words)));
    kv_addresses.access = vk::Access::read;
  }

  push.batch = p.batch;
  push.seq_len = p.seq_len;
  push.num_heads = p.num_heads;
  push.num_kv_heads = p.num_kv_heads;
  push.capacity = p.kv_capacity;
  const bool paged = p.slot_layout() == KvLayout::paged;
  const bool tiered = p.layout == KvLayout::tiered;
  push.max_pages = paged ? p.max_pages : 0;
  push.num_pages = paged ? p.num_pages : 0;
  push.flags = (p.causal ? TEXT_FLAG_CAUSAL : 0u) | (kv_len.from_buffer ? TEXT_FLAG_KV_LEN_BUFFER : 0u) |
               (start_pos.from_buffer ? TEXT_FLAG_START_POS_BUFFER : 0u) |
               (kv_start.from_buffer ? TEXT_FLAG_KV_START_BUFFER : 0u) |
               (tiered && paged ? TEXT_FLAG_COLD_PAGED : 0u);
  push.hot_window = tiered ? p.hot_window : 0;
  push.kv_len = kv_len.uniform;
  push.start_pos = start_pos.uniform;
  push.kv_start = kv_start.uniform;
  push.window = p.window;
  push.scale = p.effective_scale();
  push.softcap = p.softcap;
  push.num_splits = splits;
  // Written only by split calls; every module declares them writable.
  vk::BufferRef partial_o = ops::unwritten_output(rec), partial_ml = partial_o, arrivals = partial_o;
  if (split) {
    const uint64_t rows = uint64_t(p.batch) * splits * p.seq_len * p.num_heads;
    partial_o = rec.scratch(rows * p.head_dim * 4);
    partial_ml = rec.scratch(rows * 8);
  }
  if (split_mode == TEXT_SPLIT_LAST_COMBINES)
    arrivals = rec.zeroed_scratch(ops::split_arrival_bytes(p.batch, p.seq_len, p.num_heads));
  const vk::BufferRef unused{placeholder, 0, 64, vk::Access::read};
  std::array<vk::BufferRef, TEXT_BINDINGS> buffers;
  buffers.fill(unused);  // bindings this call's layout and dtypes do not read
  buffers[TEXT_BIND_Q] = vk::ref(t.q, vk::Access::read);
  buffers[TEXT_BIND_K] = vk::ref(t.k, vk::Access::read);
  buffers[TEXT_BIND_V] = vk::ref(t.v, vk::Access::read);
  buffers[TEXT_BIND_K].by_address = buffers[TEXT_BIND_V].by_address = by_address;
  buffers[TEXT_BIND_KV_ADDRESS] = kv_addresses;
  buffers[TEXT_BIND_O] = vk::ref(t.out, reduce ? vk::Access::read : vk::Access::write);
  if (paged) buffers[TEXT_BIND_PAGE_TABLE] = vk::ref(t.page_table, vk::Access::read);
  if (tiered) {
    buffers[TEXT_BIND_HOT_K] = vk::ref(t.hot_k, vk::Access::read);
    buffers[TEXT_BIND_HOT_V] = vk::ref(t.hot_v, vk::Access::read);
  }
  buffers[TEXT_BIND_KV_LEN] = kv_len.buffer;
  buffers[TEXT_BIND_START_POS] = start_pos.buffer;
  buffers[TEXT_BIND_KV_START] = kv_start.buffer;
  if (is_quantized(t.k.dtype())) {
    buffers[TEXT_BIND_K_SCALE] = vk::ref(t.k_scale, vk::Access::read);
    buffers[TEXT_BIND_V_SCALE] = vk::ref(t.v_scale, vk::Access::read);
  }
  // The last split reads the partials back.
  const vk::Access partials = split_mode == TEXT_SPLIT_LAST_COMBINES ? vk::Access::read_write : vk::Access::write;
  buffers[TEXT_BIND_PARTIAL_O] = {partial_o.buffer, partial_o.offset, partial_o.range, partials};
  buffers[TEXT_BIND_PARTIAL_ML] = {partial_ml.buffer, partial_ml.offset, partial_ml.range, partials};
  buffers[TEXT_BIND_SPLIT_ARRIVALS] = arrivals;

  const auto push_bytes = std::as_bytes(std::span(&push, 1));
  const vk::Pipeline& pipeline = *cached.pipelines[0];
  if (t.indirect.valid()) {
    // Splits that an indirect count leaves out must read as empty in the reduce.
    if (split) rec.fill(partial_ml, kNegativeInfinityBits);
    rec.dispatch_indirect(pipeline, buffers, push_bytes, vk::ref(t.indirect, vk::Access::read));
  } else {
    rec.dispatch(pipeline, buffers, push_bytes, info.workgroups[0], info.workgroups[1], info.workgroups[2]);
  }

  if (reduce) {
    buffers[TEXT_BIND_O] = vk::ref(t.out, vk::Access::write);
    buffers[TEXT_BIND_PARTIAL_O] = {partial_o.buffer, partial_o.offset, partial_o.range, vk::Access::read};
    buffers[TEXT_BIND_PARTIAL_ML] = {partial_ml.buffer, partial_ml.offset, partial_ml.range, vk::Access::read};
    const uint32_t* rg = plan.dispatches[1].grid;
    rec.dispatch(*cached.pipelines[1], buffers, push_bytes, rg[0], rg[1], rg[2]);
  }
  return info;
}

}  // namespace

TextCallInfo record(Recorder& recorder, const Plan& plan, const TextAttentionParams& p, const TextAttentionTensors& t) {
  vk::RecorderImpl& rec = recorder.impl();
  vk::Runtime& rt = recorder.context().runtime();
  text::validate_params(p);
  text::validate_tensors(p, t, rt.caps());
  const TextTensorTypes types = text_tensor_types(t, rt.caps());
  return ops::record_from_plan<TextCallInfo>(
      plan, PlanFamily::text, rt.caps(),
      [&](const PlanOptions& o) -> const planner::CachedPlan& { return text::cached_plan(rt, p, types, o); },
      [&](const planner::CachedPlan& c) { return record_checked(rec, rt, c, p, t); });
}

TextCallInfo text_attention(Recorder& recorder, const TextAttentionParams& p, const TextAttentionTensors& t,
                            const PlanOptions& options) {
  vk::RecorderImpl& rec = recorder.impl();
  vk::Runtime& rt = recorder.context().runtime();
  text::validate_params(p);
  text::validate_tensors(p, t, rt.caps());
  return record_checked(rec, rt, text::cached_plan(rt, p, text_tensor_types(t, rt.caps()), options), p, t);
}

TextCallInfo text_attention(Recorder& rec, const TextAttentionParams& p, const TextAttentionTensors& t) {
  return text_attention(rec, p, t, PlanOptions{});
}

TextCallInfo run_text_attention(Context& ctx, const TextAttentionParams& p, const TextAttentionTensors& t,
                                const PlanOptions& options) {
  Recorder rec(ctx);
  TextCallInfo info = text_attention(rec, p, t, options);
  rec.run();
  return info;
}

}  // namespace vkattn

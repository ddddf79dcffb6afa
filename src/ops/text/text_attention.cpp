// Text attention: validate -> plan -> cached pipeline -> bind -> record.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "shaders/text_attention_interface.h"
#include "ops/text/text_validate.hpp"
#include "planner/text_planner.hpp"
#include "vk/recorder_impl.hpp"
#include "vk/runtime.hpp"
#include "vkattn/context.hpp"
#include "vkattn/error.hpp"
#include "vkattn/plan.hpp"
#include "vkattn/recorder.hpp"
#include "vkattn/text.hpp"

namespace vkattn {

uint32_t text::dtype_code(DType t) {
  switch (t) {
    case DType::f16: return TEXT_DT_F16;
    case DType::bf16: return TEXT_DT_BF16;
    case DType::i8: return TEXT_DT_INT8;
    case DType::i4: return TEXT_DT_INT4;
    default: return TEXT_DT_F32;
  }
}

uint32_t text::layout_code(KvLayout l) {
  switch (l) {
    case KvLayout::ring: return TEXT_LAYOUT_RING;
    case KvLayout::paged: return TEXT_LAYOUT_PAGED;
    case KvLayout::tiered: return TEXT_LAYOUT_TIERED;
    default: return TEXT_LAYOUT_CONTIGUOUS;
  }
}

namespace {

// A per-sequence value: one for all (push constant), or one each (GPU buffer).
struct PerSequence {
  uint32_t uniform = 0;
  vk::BufferRef buffer;
  bool from_buffer = false;
};

PerSequence per_sequence(vk::RecorderImpl& rec, const std::vector<uint32_t>& values, const Tensor& gpu,
                         VkBuffer placeholder) {
  PerSequence s;
  if (gpu.valid()) {
    s.buffer = vk::ref(gpu, vk::Access::read);
    s.from_buffer = true;
  } else if (values.size() > 1) {
    // Different values per sequence given on the host: written by the command
    // buffer itself into scratch, so no extra submit.
    s.buffer = rec.scratch(values.size() * 4);
    rec.update(s.buffer, std::as_bytes(std::span(values)));
    s.buffer.access = vk::Access::read;
    s.from_buffer = true;
  } else {
    s.uniform = values[0];
    s.buffer = {placeholder, 0, 64, vk::Access::read};
  }
  return s;
}

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

TextCallInfo text_attention(Recorder& recorder, const TextAttentionParams& p, const TextAttentionTensors& t,
                            const PlanOptions& options) {
  vk::RecorderImpl& rec = recorder.impl();
  vk::Runtime& rt = recorder.context().runtime();
  const DeviceCaps& caps = rt.caps();
  text::validate_params(p);
  text::validate_tensors(p, t, caps);

  const planner::TextShape shape = planner::text_shape_of(p, t.q.dtype(), t.k.dtype(), t.kv_len.valid());
  const planner::TextPlan plan = planner::plan_text(caps, shape, options);
  const planner::TextGeometry& g = plan.geometry;

  // One split needs no reduce: the kernel normalises and writes the output itself.
  const bool split = plan.variant->kind == planner::Kind::split && g.splits > 1;
  std::vector<uint32_t> spec(TEXT_SC_COUNT, 0);
  spec[TEXT_SC_HEAD_DIM] = p.head_dim;
  spec[TEXT_SC_WG_SIZE] = g.workgroup_size;
  spec[TEXT_SC_Q_POS] = g.q_pos;
  spec[TEXT_SC_HEAD_GROUP] = g.head_group;
  spec[TEXT_SC_TILE_KEYS] = g.tile_keys;
  spec[TEXT_SC_Q_TYPE] = text::dtype_code(t.q.dtype());
  spec[TEXT_SC_KV_TYPE] = text::dtype_code(t.k.dtype());
  spec[TEXT_SC_O_TYPE] = text::dtype_code(t.out.dtype());
  spec[TEXT_SC_LAYOUT] = text::layout_code(p.layout);
  spec[TEXT_SC_SPLIT] = split ? 1 : 0;
  spec[TEXT_SC_ACC_CHUNKS] = g.acc_chunks;
  spec[TEXT_SC_SUBGROUP_SIZE] = caps.subgroup_size;
  spec[TEXT_SC_KEY_LANES] = g.key_lanes;
  spec[TEXT_SC_KV_GROUP] = text::is_quantized(t.k.dtype()) ? p.kv_quant_group : 0;
  const vk::ShaderInterface iface{TEXT_BINDINGS, sizeof(text::TextPush)};
  // A pool past one binding is read through device addresses, by the same kernel built that way.
  const bool by_address = text::kv_by_address(t, caps);
  const vk::Pipeline& pipeline = rt.pipelines().get(
      {by_address ? plan.variant->module_by_address() : plan.variant->module, spec, g.required_subgroup_size}, iface);

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
  info.variant = plan.variant->name;
  info.reason = plan.reason;
  if (by_address)
    info.reason += fmt::format("; K/V ({} bytes) read through buffer device addresses, past the {}-byte binding range",
                               t.k.bytes(), caps.max_storage_buffer_range);
  info.warnings = plan.warnings;
  info.splits = g.splits;
  const uint32_t gqa = p.num_heads / p.num_kv_heads;
  const uint64_t grid[3] = {(uint64_t(p.seq_len) + g.q_pos - 1) / g.q_pos, uint64_t(p.num_kv_heads) * (gqa / g.head_group),
                            uint64_t(p.batch) * g.splits};  // 64-bit: the products may pass 2^32
  for (int i = 0; i < 3; ++i) {
    if (grid[i] > caps.max_workgroup_count[i])
      throw Error(ErrorKind::unsupported,
                  fmt::format("workgroups[{}]: expected at most {} (device limit), got {} for this shape", i,
                              caps.max_workgroup_count[i], grid[i]));
    info.workgroups[i] = static_cast<uint32_t>(grid[i]);
  }
  const uint64_t rows = uint64_t(p.batch) * g.splits * p.seq_len * p.num_heads;
  const vk::Pipeline* reduce = nullptr;
  const uint64_t reduce_groups = uint64_t(p.seq_len) * p.num_heads;  // x; y is the batch
  if (split) {
    if (rows * p.head_dim * 4 > caps.max_storage_buffer_range)
      throw Error(ErrorKind::unsupported, fmt::format("split scratch: expected at most {} bytes, got {}",
                                                      caps.max_storage_buffer_range, rows * p.head_dim * 4));
    if (reduce_groups > caps.max_workgroup_count[0] || p.batch > caps.max_workgroup_count[1])
      throw Error(ErrorKind::unsupported,
                  fmt::format("split reduce workgroups: expected at most [{}, {}] (device limit), got [{}, {}]",
                              caps.max_workgroup_count[0], caps.max_workgroup_count[1], reduce_groups, p.batch));
    std::vector<uint32_t> rspec(TEXT_SC_COUNT, 0);
    rspec[TEXT_SC_HEAD_DIM] = p.head_dim;
    // A power of two (for the max tree) up to 256; Vulkan guarantees 128
    // invocations, which covers D/4 <= 128 columns.
    uint32_t wg = 1;
    while (wg * 2 <= std::min(256u, caps.max_workgroup_invocations)) wg *= 2;
    rspec[TEXT_SC_WG_SIZE] = wg;
    rspec[TEXT_SC_O_TYPE] = text::dtype_code(t.out.dtype());
    reduce = &rt.pipelines().get({"text_split_reduce", rspec, 0}, iface);
  }

  const VkBuffer placeholder = rt.placeholder_buffer();
  PerSequence kv_len = per_sequence(rec, p.kv_len, t.kv_len, placeholder);
  PerSequence start_pos = per_sequence(rec, p.start_pos, t.start_pos, placeholder);
  PerSequence kv_start = per_sequence(rec, p.kv_start, t.kv_start, placeholder);
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
  push.num_splits = g.splits;
  vk::BufferRef partial_o{placeholder, 0, 64, vk::Access::read};
  vk::BufferRef partial_ml = partial_o;
  if (split) {
    partial_o = rec.scratch(rows * p.head_dim * 4);
    partial_ml = rec.scratch(rows * 8);
  }
  const vk::BufferRef unused{placeholder, 0, 64, vk::Access::read};
  std::array<vk::BufferRef, TEXT_BINDINGS> buffers;
  buffers.fill(unused);  // bindings this call's layout and dtypes do not read
  buffers[TEXT_BIND_Q] = vk::ref(t.q, vk::Access::read);
  buffers[TEXT_BIND_K] = vk::ref(t.k, vk::Access::read);
  buffers[TEXT_BIND_V] = vk::ref(t.v, vk::Access::read);
  buffers[TEXT_BIND_K].by_address = buffers[TEXT_BIND_V].by_address = by_address;
  buffers[TEXT_BIND_KV_ADDRESS] = kv_addresses;
  buffers[TEXT_BIND_O] = vk::ref(t.out, split ? vk::Access::read : vk::Access::write);
  if (paged) buffers[TEXT_BIND_PAGE_TABLE] = vk::ref(t.page_table, vk::Access::read);
  if (tiered) {
    buffers[TEXT_BIND_HOT_K] = vk::ref(t.hot_k, vk::Access::read);
    buffers[TEXT_BIND_HOT_V] = vk::ref(t.hot_v, vk::Access::read);
  }
  buffers[TEXT_BIND_KV_LEN] = kv_len.buffer;
  buffers[TEXT_BIND_START_POS] = start_pos.buffer;
  buffers[TEXT_BIND_KV_START] = kv_start.buffer;
  const bool quantized = text::is_quantized(t.k.dtype());
  buffers[TEXT_BIND_K_SCALE] = quantized ? vk::ref(t.k_scale, vk::Access::read) : vk::BufferRef{placeholder, 0, 64, vk::Access::read};
  buffers[TEXT_BIND_V_SCALE] = quantized ? vk::ref(t.v_scale, vk::Access::read) : vk::BufferRef{placeholder, 0, 64, vk::Access::read};
  const vk::Access partial_access = split ? vk::Access::write : vk::Access::read;  // placeholder when not split
  buffers[TEXT_BIND_PARTIAL_O] = {partial_o.buffer, partial_o.offset, partial_o.range, partial_access};
  buffers[TEXT_BIND_PARTIAL_ML] = {partial_ml.buffer, partial_ml.offset, partial_ml.range, partial_access};

  const auto push_bytes = std::as_bytes(std::span(&push, 1));
  if (t.indirect.valid()) {
    // Splits that an indirect count leaves out must read as empty in the reduce.
    if (split) rec.fill(partial_ml, 0xff800000u);
    rec.dispatch_indirect(pipeline, buffers, push_bytes, vk::ref(t.indirect, vk::Access::read));
  } else {
    rec.dispatch(pipeline, buffers, push_bytes, info.workgroups[0], info.workgroups[1], info.workgroups[2]);
  }

  if (split) {
    buffers[TEXT_BIND_O] = vk::ref(t.out, vk::Access::write);
    buffers[TEXT_BIND_PARTIAL_O] = {partial_o.buffer, partial_o.offset, partial_o.range, vk::Access::read};
    buffers[TEXT_BIND_PARTIAL_ML] = {partial_ml.buffer, partial_ml.offset, partial_ml.range, vk::Access::read};
    rec.dispatch(*reduce, buffers, push_bytes, static_cast<uint32_t>(reduce_groups), p.batch, 1);
  }
  return info;
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

// kv_append: validate -> cached pipeline -> bind -> record, like the attention ops.
#include <fmt/format.h>

#include <array>

#include "ops/recording.hpp"
#include "ops/text/text_validate.hpp"
#include "shaders/kv_append_interface.h"
#include "shaders/kv_quant_interface.h"
#include "shaders/text_attention_interface.h"
#include "vk/recorder_impl.hpp"
#include "vk/runtime.hpp"
#include "vkattn/context.hpp"
#include "vkattn/error.hpp"
#include "vkattn/kvcache.hpp"
#include "vkattn/recorder.hpp"

namespace vkattn {

namespace {

[[noreturn]] void bad(const std::string& msg) { throw Error(ErrorKind::invalid_argument, msg); }

uint32_t position_of(const KvAppendParams& p, uint32_t b) {
  return p.positions.size() == 1 ? p.positions[0] : p.positions.at(b);
}

void validate_params(const KvAppendParams& p) {
  if (p.batch == 0) bad("batch: expected >= 1, got 0");
  if (p.tokens == 0) bad("tokens: expected >= 1, got 0");
  if (p.num_kv_heads == 0) bad("num_kv_heads: expected >= 1, got 0");
  if (p.head_dim == 0 || p.head_dim % KVA_UNIT || p.head_dim > KVA_UNIT * KVA_WG_SIZE)
    bad(fmt::format("head_dim: expected a multiple of {} in [{}, {}], got {}", KVA_UNIT, KVA_UNIT,
                    KVA_UNIT * KVA_WG_SIZE, p.head_dim));
  text::check_tier_params(p.layout, p.hot_window, p.cold_layout);
  const KvLayout slots = p.slot_layout();
  if (p.kv_capacity == 0)
    bad(fmt::format("kv_capacity: expected >= 1 ({}), got 0",
                    slots == KvLayout::paged ? "the page size" : "cache slots per sequence"));
  if (p.positions.size() != 1 && p.positions.size() != p.batch)
    bad(fmt::format("positions: expected 1 or batch ({}) values, got {}", p.batch, p.positions.size()));
  if (slots == KvLayout::paged && (p.num_pages == 0 || p.max_pages == 0))
    bad(fmt::format("num_pages, max_pages: expected >= 1 for a paged cache, got {} and {}", p.num_pages, p.max_pages));
  text::check_quant_group(p.quant_group);
  if (p.layout == KvLayout::ring && p.tokens > p.kv_capacity)
    bad(fmt::format("tokens: expected at most kv_capacity ({}, the ring's slots) per write, got {}", p.kv_capacity,
                    p.tokens));
  for (uint32_t b = 0; b < p.positions.size(); ++b) {
    const uint64_t first = position_of(p, b), end = first + p.tokens;  // one past the last position written
    if (end >= (1ull << 31))
      bad(fmt::format("positions: expected position + tokens < 2^31, got {} + {} for sequence {}", first, p.tokens, b));
    if (slots == KvLayout::contiguous && end > p.kv_capacity)
      bad(fmt::format("positions: expected position + tokens <= kv_capacity ({}), got {} + {} for sequence {}",
                      p.kv_capacity, first, p.tokens, b));
    if (slots == KvLayout::paged && end > uint64_t(p.max_pages) * p.kv_capacity)
      bad(fmt::format("positions: expected position + tokens <= max_pages * page_size ({}), got {} + {} for sequence {}",
                      uint64_t(p.max_pages) * p.kv_capacity, first, p.tokens, b));
  }
}

}  // namespace

uint64_t kv_bytes_per_token(DType kv, uint32_t num_kv_heads, uint32_t head_dim, uint32_t quant_group) {
  uint64_t row = dtype_storage_bytes(kv, head_dim);
  if (is_quantized(kv)) row += 2ull * kvquant::scale_groups(quant_group, head_dim);
  return 2 * row * num_kv_heads;  // K and V
}

void kv_append(Recorder& recorder, const KvAppendParams& p, const KvAppendTensors& t) {
  vk::RecorderImpl& rec = recorder.impl();
  vk::Runtime& rt = recorder.context().runtime();
  const DeviceCaps& caps = rt.caps();
  validate_params(p);
  const bool paged = p.slot_layout() == KvLayout::paged, tiered = p.layout == KvLayout::tiered;
  const Shape src_shape{p.batch, p.tokens, p.num_kv_heads, p.head_dim};
  const Shape cache_shape = paged ? Shape{p.num_pages, p.kv_capacity, p.num_kv_heads, p.head_dim}
                                  : Shape{p.batch, p.kv_capacity, p.num_kv_heads, p.head_dim};
  using text::TensorKind;
  text::check_tensor("k", t.k, src_shape, TensorKind::value, caps);
  text::check_tensor("v", t.v, src_shape, TensorKind::value, caps);
  text::check_tensor("cache_k", t.cache_k, cache_shape, TensorKind::kv, caps);
  text::check_tensor("cache_v", t.cache_v, cache_shape, TensorKind::kv, caps);
  if (t.v.dtype() != t.k.dtype())
    bad(fmt::format("v: expected the dtype of k ({}), got {}", to_string(t.k.dtype()), to_string(t.v.dtype())));
  if (t.cache_v.dtype() != t.cache_k.dtype())
    bad(fmt::format("cache_v: expected the dtype of cache_k ({}), got {}", to_string(t.cache_k.dtype()),
                    to_string(t.cache_v.dtype())));
  // The shader indexes rows directly: dense tensors.
  for (auto [name, tensor] : {std::pair{"k", &t.k}, {"v", &t.v}, {"cache_k", &t.cache_k}, {"cache_v", &t.cache_v}})
    if (!tensor->contiguous())
      bad(fmt::format("{}: expected a dense tensor, got strides {}", name, shape_to_string(tensor->strides())));
  const bool quantized = is_quantized(t.cache_k.dtype());
  if (tiered && t.cache_k.dtype() == DType::f32)  // the kernels read no f32 cold tier
    bad("cache_k: expected f16, bf16, i8 or i4 for the cold tier of the tiered layout, got f32");
  if (quantized) {
    const Shape sshape = text::scale_shape(cache_shape, p.quant_group);
    text::check_tensor("k_scale", t.k_scale, sshape, TensorKind::scale, caps);
    text::check_tensor("v_scale", t.v_scale, sshape, TensorKind::scale, caps);
  }
  text::check_hot_ring(p.layout, t.hot_k, t.hot_v, {p.batch, p.hot_window, p.num_kv_heads, p.head_dim}, caps);
  if (paged) text::check_tensor("page_table", t.page_table, {p.batch, p.max_pages}, TensorKind::index, caps);
  if (t.positions.valid()) text::check_tensor("positions", t.positions, {p.batch}, TensorKind::index, caps);
  if (paged && !t.positions.valid() && p.pages)
    for (uint32_t b = 0; b < p.batch; ++b) p.pages->check(b, position_of(p, b), p.tokens);
  const uint64_t grid[3] = {p.tokens, p.num_kv_heads, p.batch};
  for (int i = 0; i < 3; ++i)
    if (grid[i] > caps.max_workgroup_count[i])
      throw Error(ErrorKind::unsupported, fmt::format("workgroups[{}]: expected at most {} (device limit), got {}", i,
                                                      caps.max_workgroup_count[i], grid[i]));

  std::vector<uint32_t> spec(KVA_SC_COUNT, 0);
  spec[KVA_SC_HEAD_DIM] = p.head_dim;
  spec[KVA_SC_SRC_TYPE] = dtype_code(t.k.dtype());
  spec[KVA_SC_DST_TYPE] = dtype_code(t.cache_k.dtype());
  spec[KVA_SC_LAYOUT] = text::layout_code(p.slot_layout());
  spec[KVA_SC_GROUP] = quantized ? p.quant_group : 0;
  spec[KVA_SC_HOT_RING] = tiered;
  const vk::ShaderInterface iface{KVA_BINDINGS, sizeof(kvappend::KvAppendPush)};
  const vk::Pipeline& pipeline = rt.pipelines().get({"kv_append", spec, 0}, iface);

  kvappend::KvAppendPush push{};
  push.batch = p.batch;
  push.tokens = p.tokens;
  push.num_kv_heads = p.num_kv_heads;
  push.capacity = p.kv_capacity;
  push.max_pages = paged ? p.max_pages : 0;
  push.num_pages = paged ? p.num_pages : 0;
  push.hot_window = tiered ? p.hot_window : 0;
  const VkBuffer placeholder = rt.placeholder_buffer();
  const vk::BufferRef none{placeholder, 0, 64, vk::Access::read};
  vk::BufferRef positions = none;
  if (t.positions.valid()) {
    positions = vk::ref(t.positions, vk::Access::read);
    push.flags |= KVA_FLAG_POSITIONS_BUFFER;
  } else if (p.positions.size() > 1) {
    positions = rec.scratch(p.positions.size() * 4);  // written by the command buffer itself
    rec.update(positions, std::as_bytes(std::span(p.positions)));
    positions.access = vk::Access::read;
    push.flags |= KVA_FLAG_POSITIONS_BUFFER;
  } else {
    push.position = p.positions[0];
  }

  std::array<vk::BufferRef, KVA_BINDINGS> buffers{};
  buffers[KVA_BIND_SRC_K] = vk::ref(t.k, vk::Access::read);
  buffers[KVA_BIND_SRC_V] = vk::ref(t.v, vk::Access::read);
  buffers[KVA_BIND_DST_K] = vk::ref(t.cache_k, vk::Access::write);
  buffers[KVA_BIND_DST_V] = vk::ref(t.cache_v, vk::Access::write);
  // The scales are read-modify-written (two rows share a word).
  const vk::BufferRef unwritten = ops::unwritten_output(rec);  // bindings this call's module writes, never this call
  buffers[KVA_BIND_K_SCALE] = quantized ? vk::ref(t.k_scale, vk::Access::read_write) : unwritten;
  buffers[KVA_BIND_V_SCALE] = quantized ? vk::ref(t.v_scale, vk::Access::read_write) : unwritten;
  buffers[KVA_BIND_PAGE_TABLE] = paged ? vk::ref(t.page_table, vk::Access::read) : none;
  buffers[KVA_BIND_POSITIONS] = positions;
  buffers[KVA_BIND_HOT_K] = tiered ? vk::ref(t.hot_k, vk::Access::write) : unwritten;
  buffers[KVA_BIND_HOT_V] = tiered ? vk::ref(t.hot_v, vk::Access::write) : unwritten;
  rec.dispatch(pipeline, buffers, std::as_bytes(std::span(&push, 1)), p.tokens, p.num_kv_heads, p.batch);
}

}  // namespace vkattn

// Recording helpers the text and BDPA ops share.
#pragma once

#include <span>
#include <vector>

#include "shaders/text_attention_interface.h"
#include "vk/pipeline_cache.hpp"
#include "vk/recorder_impl.hpp"
#include "vk/runtime.hpp"
#include "vkattn/plan.hpp"
#include "vkattn/tensor.hpp"

namespace vkattn::ops {

// A binding the call's module declares writable but this call never writes
// (an unsplit call's partials, an absent tier): a small scratch range of its
// own. The shared placeholder would do for the GPU, but two calls recorded
// back to back would then both write one range as far as the validator sees.
inline vk::BufferRef unwritten_output(vk::RecorderImpl& rec) {
  vk::BufferRef r = rec.scratch(64);
  r.access = vk::Access::write;
  return r;
}

// A per-sequence value: one for every sequence (a push constant) or one each
// (the caller's GPU buffer, or the host's values written into scratch by the
// command buffer itself, so no extra submit).
struct PerSequence {
  uint32_t uniform = 0;
  vk::BufferRef buffer;
  bool from_buffer = false;
};

inline PerSequence per_sequence(vk::RecorderImpl& rec, const std::vector<uint32_t>& values, const Tensor& gpu,
                                VkBuffer placeholder) {
  PerSequence s{values[0], {placeholder, 0, 64, vk::Access::read}, false};
  if (gpu.valid()) {
    s.buffer = vk::ref(gpu, vk::Access::read);
    s.from_buffer = true;
  } else if (values.size() > 1) {
    s.buffer = rec.scratch(values.size() * 4);
    rec.update(s.buffer, std::as_bytes(std::span(values)));
    s.buffer.access = vk::Access::read;
    s.from_buffer = true;
  }
  return s;
}

// The text_split_reduce dispatch for a split-KV call with `rows` partial rows
// (batch x splits x seq_len x heads) and `groups` = seq_len x heads reduce
// workgroups per sequence (grid: groups x batch); throws Error(unsupported)
// when the partials or the grid do not fit the device. Its push constants and
// bindings are text attention's (text_attention_interface.h).
PlanDispatch split_reduce_dispatch(const DeviceCaps& caps, uint32_t head_dim, DType out, uint64_t rows,
                                   uint64_t groups, uint32_t batch);

// Bytes of the split arrival counters (TEXT_BIND_SPLIT_ARRIVALS): one u32 per
// query row and head, indexed by a row group's first head.
inline uint64_t split_arrival_bytes(uint32_t batch, uint32_t seq_len, uint32_t num_heads) {
  return uint64_t(batch) * seq_len * num_heads * 4;
}

// What the grid of a decoder attention dispatch (text, BDPA) is made of.
struct DecoderGrid {
  uint32_t batch, seq_len, num_heads, num_kv_heads, head_dim;
  uint32_t q_pos, head_group;  // query positions and heads per workgroup
  uint32_t splits;             // > 1: partials, reduced by text_split_reduce
  DType out;
  // With splits: the last split of each row group combines the partials
  // (TEXT_SPLIT_LAST_COMBINES), so there is no text_split_reduce dispatch.
  bool last_split_combines = false;
};
// Gives `attention` its grid (query-position blocks, KV heads x head groups,
// batch x splits; an Error(unsupported) past the device's limits) and appends
// it to the plan; with splits, then text_split_reduce (unless the last split
// combines) and the partials' scratch.
void add_decoder_dispatches(Plan& plan, PlanDispatch attention, const DeviceCaps& caps, const DecoderGrid& g);

}  // namespace vkattn::ops

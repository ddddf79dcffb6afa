#include "ops/recording.hpp"
#include "ops/text/text_validate.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "vkattn/error.hpp"

namespace vkattn::ops {

PlanDispatch split_reduce_dispatch(const DeviceCaps& caps, uint32_t head_dim, DType out, uint64_t rows,
                                   uint64_t groups, uint32_t batch) {
  if (rows * head_dim * 4 > caps.max_storage_buffer_range)
    throw Error(ErrorKind::unsupported, fmt::format("split scratch: expected at most {} bytes, got {}",
                                                    caps.max_storage_buffer_range, rows * head_dim * 4));
  if (groups > caps.max_workgroup_count[0] || batch > caps.max_workgroup_count[1])
    throw Error(ErrorKind::unsupported,
                fmt::format("split reduce workgroups: expected at most [{}, {}] (device limit), got [{}, {}]",
                            caps.max_workgroup_count[0], caps.max_workgroup_count[1], groups, batch));
  PlanDispatch d;
  d.module = "text_split_reduce";
  d.spec_constants.assign(TEXT_SC_COUNT, 0);
  d.spec_constants[TEXT_SC_HEAD_DIM] = head_dim;
  // A power of two (for the max tree) up to 256; Vulkan guarantees 128
  // invocations, which covers D/4 <= 128 columns.
  uint32_t wg = 1;
  while (wg * 2 <= std::min(256u, caps.max_workgroup_invocations)) wg *= 2;
  d.spec_constants[TEXT_SC_WG_SIZE] = wg;
  d.spec_constants[TEXT_SC_O_TYPE] = dtype_code(out);
  d.grid[0] = static_cast<uint32_t>(groups);
  d.grid[1] = batch;
  return d;
}

void add_decoder_dispatches(Plan& plan, PlanDispatch attention, const DeviceCaps& caps, const DecoderGrid& g) {
  const uint32_t gqa = g.num_heads / g.num_kv_heads;
  const uint64_t grid[3] = {(uint64_t(g.seq_len) + g.q_pos - 1) / g.q_pos,
                            uint64_t(g.num_kv_heads) * (gqa / g.head_group),
                            uint64_t(g.batch) * g.splits};  // 64-bit: the products may pass 2^32
  for (int i = 0; i < 3; ++i) {
    if (grid[i] > caps.max_workgroup_count[i])
      throw Error(ErrorKind::unsupported,
                  fmt::format("workgroups[{}]: expected at most {} (device limit), got {} for this shape", i,
                              caps.max_workgroup_count[i], grid[i]));
    attention.grid[i] = static_cast<uint32_t>(grid[i]);
  }
  plan.dispatches.push_back(std::move(attention));
  if (g.splits <= 1) return;
  const uint64_t rows = uint64_t(g.batch) * g.splits * g.seq_len * g.num_heads;
  PlanDispatch reduce =
      split_reduce_dispatch(caps, g.head_dim, g.out, rows, uint64_t(g.seq_len) * g.num_heads, g.batch);
  plan.scratch_bytes = rows * g.head_dim * 4 + rows * 8;  // partial outputs, then (max, sum) pairs
  if (g.last_split_combines)
    plan.scratch_bytes += split_arrival_bytes(g.batch, g.seq_len, g.num_heads);
  else
    plan.dispatches.push_back(std::move(reduce));  // checked either way: the same partials must fit
}

}  // namespace vkattn::ops

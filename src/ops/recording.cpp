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

const vk::Pipeline& split_reduce_pipeline(vk::Runtime& rt, uint32_t head_dim, DType out, uint64_t rows,
                                          uint64_t groups, uint32_t batch) {
  const PlanDispatch d = split_reduce_dispatch(rt.caps(), head_dim, out, rows, groups, batch);
  return rt.pipelines().get({d.module, d.spec_constants, 0}, {TEXT_BINDINGS, sizeof(text::TextPush)});
}

}  // namespace vkattn::ops

#include "ops/recording.hpp"
#include "ops/text/text_validate.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "vkattn/error.hpp"

namespace vkattn::ops {

const vk::Pipeline& split_reduce_pipeline(vk::Runtime& rt, uint32_t head_dim, DType out, uint64_t rows,
                                          uint64_t groups, uint32_t batch) {
  const DeviceCaps& caps = rt.caps();
  if (rows * head_dim * 4 > caps.max_storage_buffer_range)
    throw Error(ErrorKind::unsupported, fmt::format("split scratch: expected at most {} bytes, got {}",
                                                    caps.max_storage_buffer_range, rows * head_dim * 4));
  if (groups > caps.max_workgroup_count[0] || batch > caps.max_workgroup_count[1])
    throw Error(ErrorKind::unsupported,
                fmt::format("split reduce workgroups: expected at most [{}, {}] (device limit), got [{}, {}]",
                            caps.max_workgroup_count[0], caps.max_workgroup_count[1], groups, batch));
  std::vector<uint32_t> spec(TEXT_SC_COUNT, 0);
  spec[TEXT_SC_HEAD_DIM] = head_dim;
  // A power of two (for the max tree) up to 256; Vulkan guarantees 128
  // invocations, which covers D/4 <= 128 columns.
  uint32_t wg = 1;
  while (wg * 2 <= std::min(256u, caps.max_workgroup_invocations)) wg *= 2;
  spec[TEXT_SC_WG_SIZE] = wg;
  spec[TEXT_SC_O_TYPE] = text::dtype_code(out);
  return rt.pipelines().get({"text_split_reduce", spec, 0}, {TEXT_BINDINGS, sizeof(text::TextPush)});
}

}  // namespace vkattn::ops

#include "ops/fragment_layout_probe.hpp"

#include <array>
#include <string>

#include "planner/fragment_geometry.hpp"
#include "shaders/stream_interface.h"
#include "vk/recorder_impl.hpp"
#include "vk/runtime.hpp"
#include "vkattn/context.hpp"
#include "vkattn/recorder.hpp"

namespace vkattn::ops {

namespace {

// Runs one probe module: one warp, writing 1 to its one binding where the layout holds.
bool probe_holds(Context& ctx, const std::string& module) {
  Tensor holds = ctx.tensor(DType::f32, {1});  // one uint: 1 if the layout holds
  const vk::Pipeline& pipe = ctx.runtime().pipelines().get(
      {module, {}, planner::tensor_core_subgroup_size(ctx.caps())}, vk::ShaderInterface{1, 0});
  const std::array<vk::BufferRef, 1> buffers{vk::ref(holds, vk::Access::write)};
  Recorder rec(ctx);
  rec.impl().dispatch(pipe, buffers, {}, 1, 1, 1);
  rec.run();
  return ctx.download_as<uint32_t>(holds).at(0) == 1u;
}

}  // namespace

bool fragment_layout_holds(Context& ctx) {
  const DeviceCaps& caps = ctx.caps();
  if (!planner::tensor_core_fragments_missing(caps).empty()) return false;
  if (!probe_holds(ctx, "flash_layout_probe")) return false;
  // The 16x8 accumulator of text_decode_stream, where the device offers that shape.
  if (!caps.has_coop_shape(FLASH_FRAG, STREAM_HEADS, FLASH_FRAG, "f16", "f32")) return true;
  return probe_holds(ctx, "stream_layout_probe");
}

}  // namespace vkattn::ops

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

// Runs one probe module (one warp, writing 1 where the layout holds) with
// `buffers` bindings, the first its answer.
bool probe_holds(Context& ctx, const std::string& module, uint32_t buffers) {
  Tensor holds = ctx.tensor(DType::f32, {1});  // one uint: 1 if the layout holds
  const vk::Pipeline& pipe = ctx.runtime().pipelines().get(
      {module, {}, planner::tensor_core_subgroup_size(ctx.caps())}, vk::ShaderInterface{buffers, 0});
  std::array<vk::BufferRef, 3> refs{vk::ref(holds, vk::Access::write)};
  // The stream probe declares the K/V bindings its fragment layer names and never reads.
  for (uint32_t i = 1; i < buffers; ++i) refs[i] = {ctx.runtime().placeholder_buffer(), 0, 64, vk::Access::read};
  Recorder rec(ctx);
  rec.impl().dispatch(pipe, std::span(refs.data(), buffers), {}, 1, 1, 1);
  rec.run();
  return ctx.download_as<uint32_t>(holds).at(0) == 1u;
}

}  // namespace

bool fragment_layout_holds(Context& ctx) {
  const DeviceCaps& caps = ctx.caps();
  if (!planner::tensor_core_fragments_missing(caps).empty()) return false;
  if (!probe_holds(ctx, "flash_layout_probe", 1)) return false;
  // The 16x8 accumulator of text_decode_stream, where the device offers that shape.
  if (!caps.has_coop_shape(FLASH_FRAG, STREAM_HEADS, FLASH_FRAG, "f16", "f32")) return true;
  return probe_holds(ctx, "stream_layout_probe", 3);
}

}  // namespace vkattn::ops

#include "ops/fragment_layout_probe.hpp"

#include <array>

#include "planner/fragment_geometry.hpp"
#include "vk/recorder_impl.hpp"
#include "vk/runtime.hpp"
#include "vkattn/context.hpp"
#include "vkattn/recorder.hpp"

namespace vkattn::ops {

bool fragment_layout_holds(Context& ctx) {
  const DeviceCaps& caps = ctx.caps();
  if (!planner::tensor_core_fragments_missing(caps).empty()) return false;
  Tensor holds = ctx.tensor(DType::f32, {1});  // one uint: 1 if the layout holds
  const vk::Pipeline& pipe = ctx.runtime().pipelines().get(
      {"flash_layout_probe", {}, planner::tensor_core_subgroup_size(caps)}, vk::ShaderInterface{1, 0});
  const std::array<vk::BufferRef, 1> buffers{vk::ref(holds, vk::Access::write)};
  Recorder rec(ctx);
  rec.impl().dispatch(pipe, buffers, {}, 1, 1, 1);
  rec.run();
  return ctx.download_as<uint32_t>(holds).at(0) == 1u;
}

}  // namespace vkattn::ops

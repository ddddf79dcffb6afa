#include "vk/fragment_layout_probe.hpp"

#include <array>

#include "shaders/flash_interface.h"
#include "vk/recorder_impl.hpp"
#include "vk/runtime.hpp"
#include "vkattn/context.hpp"
#include "vkattn/recorder.hpp"

namespace vkattn::vk {

bool fragment_layout_holds(Context& ctx) {
  const DeviceCaps& caps = ctx.caps();
  if (!caps.cooperative_matrix_nv || !caps.has_coop_shape(FLASH_FRAG, FLASH_FRAG, FLASH_FRAG, "f16", "f32") ||
      !caps.subgroup_basic || !caps.subgroup_shuffle || !caps.subgroup_arithmetic)
    return false;
  const bool pinned = caps.subgroup_size_control && caps.min_subgroup_size <= FLASH_WARP &&
                      caps.max_subgroup_size >= FLASH_WARP;
  if (!pinned && caps.subgroup_size != FLASH_WARP) return false;
  Tensor holds = ctx.tensor(DType::f32, {1});  // one uint: 1 if the layout holds
  const Pipeline& pipe =
      ctx.runtime().pipelines().get({"flash_layout_probe", {}, pinned ? FLASH_WARP : 0u}, ShaderInterface{1, 0});
  const std::array<BufferRef, 1> buffers{ref(holds, Access::write)};
  Recorder rec(ctx);
  rec.impl().dispatch(pipe, buffers, {}, 1, 1, 1);
  rec.run();
  return ctx.download_as<uint32_t>(holds).at(0) == 1u;
}

}  // namespace vkattn::vk

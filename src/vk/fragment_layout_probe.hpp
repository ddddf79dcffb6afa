// The cooperative-matrix accumulator layout the tensor-core flash rows assume
// (flash_fragment_coopmat.glsl), checked on a context's own device: the
// extension leaves the layout to the implementation.
#pragma once

namespace vkattn {
class Context;
}

namespace vkattn::vk {

// Runs flash_layout_probe.comp once where the device has 16x16x16 f16 -> f32
// cooperative matrices and subgroups of FLASH_WARP; false elsewhere.
bool fragment_layout_holds(Context& ctx);

}  // namespace vkattn::vk

// The cooperative-matrix accumulator layout the tensor-core flash rows assume
// (flash_fragment_coopmat.glsl), checked on a context's own device: the
// extension leaves the layout to the implementation.
#pragma once

namespace vkattn {
class Context;
}

namespace vkattn::ops {

// Runs flash_layout_probe.comp once where the device could run the tensor-core
// fragments otherwise (planner::tensor_core_fragments_missing); false elsewhere.
bool fragment_layout_holds(Context& ctx);

}  // namespace vkattn::ops

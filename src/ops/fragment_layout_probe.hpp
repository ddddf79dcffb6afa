// The cooperative-matrix accumulator layouts the tensor-core rows assume
// (flash_fragment_coopmat.glsl's 16x16, stream_fragment_layout.glsl's 16x8),
// checked on a context's own device: the extension leaves them to the
// implementation.
#pragma once

namespace vkattn {
class Context;
}

namespace vkattn::ops {

// Runs flash_layout_probe.comp, and stream_layout_probe.comp where the device
// has the 16x8x16 shape, once where the device could run the tensor-core
// fragments otherwise (planner::tensor_core_fragments_missing); false elsewhere.
bool fragment_layout_holds(Context& ctx);

}  // namespace vkattn::ops

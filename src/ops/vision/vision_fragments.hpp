// Vision attention on the tensor-core flash engine of text prefill
// (flash_coopmat.comp): a vision call is one bidirectional sequence of
// `patches` queries and keys whose every head is its own KV head, and PHD or
// HPD is only a choice of row strides.
#pragma once

#include "planner/vision_planner.hpp"
#include "vk/recorder_impl.hpp"
#include "vk/runtime.hpp"
#include "vkattn/vision.hpp"

namespace vkattn::vision {

// Records the call with a `fragments` plan; p and t are validated.
void record_fragments(vk::RecorderImpl& rec, vk::Runtime& rt, const VisionAttentionParams& p,
                      const VisionAttentionTensors& t, const planner::VisionPlan& plan);

}  // namespace vkattn::vision

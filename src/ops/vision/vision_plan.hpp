// Vision attention's public plan, cached per device for the one-call path.
#pragma once

#include <string>

#include "planner/plan_cache.hpp"
#include "vkattn/vision.hpp"

namespace vkattn::vk {
class Runtime;
}

namespace vkattn::vision {

// The tuning cache's shape bucket of a call: every number its plan depends on
// (a vision plan has no lengths to round).
std::string tune_bucket(const VisionAttentionParams& p, const VisionTensorTypes& types);

// Pipelines of a plan's dispatches: the attention kernel, or for the
// head-major variant on PHD tensors, three transposes in, it, one transpose out.
const planner::CachedPlan& cached_plan(vk::Runtime& rt, const VisionAttentionParams& p, const VisionTensorTypes& types,
                                       const PlanOptions& options);

// Dispatch indices of the head-major variant's transposes around the attention kernel.
constexpr size_t kTransposedAttention = 3;

}  // namespace vkattn::vision

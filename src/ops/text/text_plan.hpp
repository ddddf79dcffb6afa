// Text attention's public plan: made from the planner's choice (with the
// tuning cache), and cached per device for the one-call path.
#pragma once

#include <string>

#include "planner/plan_cache.hpp"
#include "planner/text_planner.hpp"
#include "vkattn/text.hpp"

namespace vkattn::vk {
class Runtime;
}

namespace vkattn::text {

// The tuning cache's shape bucket of a call: the numbers that decide a plan,
// lengths rounded up to a power of two.
std::string tune_bucket(const planner::TextShape& shape);

// The plan for this call on `rt`, from this thread's plan cache or made now
// (with its pipelines created) and remembered.
const planner::CachedPlan& cached_plan(vk::Runtime& rt, const TextAttentionParams& p, const TextTensorTypes& types,
                                       const PlanOptions& options);

}  // namespace vkattn::text

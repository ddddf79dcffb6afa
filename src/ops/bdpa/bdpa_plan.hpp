// BDPA attention's public plan: made from the planner's choice (with the
// tuning cache), and cached per device for the one-call path.
#pragma once

#include <string>

#include "planner/bdpa_planner.hpp"
#include "planner/plan_cache.hpp"
#include "vkattn/bdpa.hpp"

namespace vkattn::vk {
class Runtime;
}

namespace vkattn::bdpa {

// The planner's view of a call: lengths from the GPU size the splits for the
// longest replay (the index capacity).
planner::BdpaShape shape_of(const BdpaParams& p, const BdpaTensorTypes& types);
// The tuning cache's shape bucket of a call, lengths rounded up to a power of two.
std::string tune_bucket(const planner::BdpaShape& shape);

// The attention dispatch and, for a split plan, text_split_reduce's: with the
// pipelines, from this thread's plan cache or made now and remembered.
const planner::CachedPlan& cached_plan(vk::Runtime& rt, const BdpaParams& p, const BdpaTensorTypes& types,
                                       const PlanOptions& options);

}  // namespace vkattn::bdpa

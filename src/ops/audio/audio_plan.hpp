// Audio attention's public plan, cached per device for the one-call path.
#pragma once

#include "planner/plan_cache.hpp"
#include "vkattn/audio.hpp"

namespace vkattn::vk {
class Runtime;
}

namespace vkattn::audio {

const planner::CachedPlan& cached_plan(vk::Runtime& rt, const AudioAttentionParams& p, const AudioTensorTypes& types,
                                       const PlanOptions& options);

}  // namespace vkattn::audio

// Chooses the audio block-local variant for a call: one kernel per input
// dtype, through the same override handling as text and vision.
#pragma once

#include <string>
#include <vector>

#include "vkattn/caps.hpp"
#include "vkattn/plan.hpp"
#include "vkattn/types.hpp"

namespace vkattn::planner {

struct AudioPlan {
  std::string variant;
  std::string reason;
  uint32_t tile_keys = 0;
  uint32_t workgroup_size = 0;
  std::vector<PlanCandidate> candidates;
  std::vector<std::string> warnings;
};

std::vector<std::string> audio_variants();
// Honours options.variant (strict: a rejected override throws Error); any
// other override (path, splits, tile_keys) is an Error naming it.
AudioPlan plan_audio(const DeviceCaps& caps, DType dtype, const PlanOptions& options = {});

}  // namespace vkattn::planner

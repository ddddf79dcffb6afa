#include "planner/audio_planner.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "planner/selection.hpp"
#include "planner/selection_log.hpp"

namespace vkattn::planner {

namespace {

// A query sees at most max_past + max_future + 1 keys, so one workgroup per
// (frame, head) with a small key tile is the whole design space worth having:
// the only choice is the input dtype.
constexpr uint32_t kTileKeys = 32;
constexpr uint32_t kWorkgroup = 64;
constexpr DType kAudioDtypes[] = {DType::f32, DType::f16};

std::string variant_name(DType t) { return fmt::format("audio_block_local_{}", to_string(t)); }

}  // namespace

std::vector<std::string> audio_variants() {
  std::vector<std::string> names;
  for (DType t : kAudioDtypes) names.push_back(variant_name(t));
  return names;
}

AudioPlan plan_audio(const DeviceCaps& caps, DType dtype, const PlanOptions& options) {
  reject_unhonoured_options("audio", options);
  AudioPlan plan;
  plan.variant = variant_name(dtype);
  plan.reason = "the block-local kernel for this dtype";
  plan.tile_keys = kTileKeys;
  plan.workgroup_size = std::min(kWorkgroup, caps.max_workgroup_invocations);
  for (DType t : kAudioDtypes)
    plan.candidates.push_back({variant_name(t), t == dtype,
                               t == dtype ? "eligible" : fmt::format("takes {} inputs, call has {}", to_string(t),
                                                                     to_string(dtype))});
  if (!options.variant.empty()) {
    const auto it = std::find_if(plan.candidates.begin(), plan.candidates.end(),
                                 [&](const PlanCandidate& c) { return c.variant == options.variant; });
    if (it == plan.candidates.end())
      reject_override(fmt::format("{} (one of {})", unknown_variant("audio", options.variant),
                                  fmt::join(audio_variants(), ", ")),
                      false, options, plan.warnings);
    else if (!it->eligible)
      reject_override(fmt::format("variant '{}' rejected: {}", options.variant, it->why), true, options, plan.warnings);
    else
      plan.reason = "override";
    if (!plan.warnings.empty()) plan.reason = rule_reason(plan.reason, true);
  }
  log_selection_once("audio", plan.variant, plan.reason);
  return plan;
}

}  // namespace vkattn::planner

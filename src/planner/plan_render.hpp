// The parts of `explain` (src/planner/plan.cpp) that list the candidates,
// the winner and its reason, and warnings.
#pragma once

#include <string>
#include <vector>

#include "vkattn/plan.hpp"

namespace vkattn::planner {

// One line per candidate ("*" winner, "+" eligible, "-" not, then why), then
// "chosen: <winner> (<reason>)".
std::string explain_candidates(const std::vector<PlanCandidate>& candidates, const std::string& winner,
                               const std::string& reason, int name_width);
std::string explain_warnings(const std::vector<std::string>& warnings);

// The part of a public Plan every family's planner result fills alike:
// family, variant, reason, candidates and warnings.
template <class FamilyPlan>
Plan plan_header(PlanFamily family, const std::string& variant, const FamilyPlan& chosen) {
  Plan plan;
  plan.family = family;
  plan.variant = variant;
  plan.reason = chosen.reason;
  plan.candidates = chosen.candidates;
  plan.warnings = chosen.warnings;
  return plan;
}

}  // namespace vkattn::planner

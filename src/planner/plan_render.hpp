// The parts of `explain` and JSON that every planner's plan shares: the
// candidate list, the winner and its reason, and warnings.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "vkattn/plan.hpp"

namespace vkattn::planner {

// One line per candidate ("*" winner, "+" eligible, "-" not, then why), then
// "chosen: <winner> (<reason>)".
std::string explain_candidates(const std::vector<PlanCandidate>& candidates, const std::string& winner,
                               const std::string& reason, int name_width);
std::string explain_warnings(const std::vector<std::string>& warnings);

// {"variant", "reason", "geometry", "candidates", "warnings"} as pretty JSON.
std::string plan_json(const std::string& winner, const std::string& reason, nlohmann::json geometry,
                      const std::vector<PlanCandidate>& candidates, const std::vector<std::string>& warnings);

}  // namespace vkattn::planner

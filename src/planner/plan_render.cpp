#include "planner/plan_render.hpp"

#include <fmt/format.h>

namespace vkattn::planner {

std::string explain_candidates(const std::vector<PlanCandidate>& candidates, const std::string& winner,
                               const std::string& reason, int name_width) {
  std::string out;
  for (const auto& c : candidates)
    out += fmt::format("  {} {:<{}} {}\n", c.variant == winner ? "*" : (c.eligible ? "+" : "-"), c.variant,
                       name_width, c.why);
  out += fmt::format("chosen: {} ({})\n", winner, reason);
  return out;
}

std::string explain_warnings(const std::vector<std::string>& warnings) {
  std::string out;
  for (const auto& w : warnings) out += "warning: " + w + "\n";
  return out;
}

}  // namespace vkattn::planner

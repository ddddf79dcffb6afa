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

std::string plan_json(const std::string& winner, const std::string& reason, nlohmann::json geometry,
                      const std::vector<PlanCandidate>& candidates, const std::vector<std::string>& warnings) {
  nlohmann::json j;
  j["variant"] = winner;
  j["reason"] = reason;
  j["geometry"] = std::move(geometry);
  j["candidates"] = nlohmann::json::array();
  for (const auto& c : candidates)
    j["candidates"].push_back({{"variant", c.variant}, {"eligible", c.eligible}, {"why", c.why}});
  j["warnings"] = warnings;
  return j.dump(2);
}

}  // namespace vkattn::planner

#include "planner/selection.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "planner/selection_log.hpp"
#include "vkattn/error.hpp"

namespace vkattn::planner {

std::string requested_variant(const PlanOptions& o, Phase phase) {
  if (!o.variant.empty()) return o.variant;
  for (const auto& e : o.path) {
    if (e.phase != phase) continue;
    if (e.layers.empty() || std::find(e.layers.begin(), e.layers.end(), o.layer) != e.layers.end()) return e.variant;
  }
  return "";
}

void reject_unhonoured_options(std::string_view family, const PlanOptions& o) {
  auto reject = [&](const char* option, const std::string& got) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("{}: expected unset for {} attention (it has no such choice), got {}", option, family, got));
  };
  if (!o.path.empty()) reject("path", fmt::format("{} entries", o.path.size()));
  if (o.splits) reject("splits", std::to_string(o.splits));
  if (o.tile_keys) reject("tile_keys", std::to_string(o.tile_keys));
  if (o.rows) reject("rows", std::to_string(o.rows));
}

std::string unknown_variant(std::string_view family, std::string_view name) {
  const bool vowel = !family.empty() && std::string_view("aeiou").find(family[0]) != std::string_view::npos;
  return fmt::format("variant: expected {0} {1} variant name (see `vkattn plan {1}`), got '{2}'", vowel ? "an" : "a",
                     family, name);
}

void reject_override(const std::string& why, bool known, const PlanOptions& o, std::vector<std::string>& warnings) {
  if (o.strict) throw Error(known ? ErrorKind::unsupported : ErrorKind::invalid_argument, why);
  warnings.push_back(why + "; falling back to capability selection");
  warn_once(warnings.back());
}

std::string rule_reason(std::string_view reason, bool override_rejected) {
  return override_rejected ? fmt::format("override_fallback: {}", reason) : std::string(reason);
}

}  // namespace vkattn::planner

// The public plan: JSON both ways and the text `vkattn plan` prints.
#include "vkattn/plan.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <nlohmann/json.hpp>

#include "planner/plan_render.hpp"
#include "vkattn/error.hpp"

namespace vkattn {

namespace {

constexpr std::pair<PlanFamily, const char*> kFamilies[] = {
    {PlanFamily::text, "text"}, {PlanFamily::vision, "vision"}, {PlanFamily::audio, "audio"}, {PlanFamily::bdpa, "bdpa"}};

PlanFamily family_from_string(const std::string& name) {
  for (auto [f, n] : kFamilies)
    if (name == n) return f;
  throw Error(ErrorKind::invalid_argument, fmt::format("plan.family: expected text, vision, audio or bdpa, got '{}'", name));
}

// Field `key` of object `j`, naming it when `j` is not an object or lacks it.
const nlohmann::json& member(const nlohmann::json& j, const char* key, const std::string& where) {
  if (!j.is_object() || !j.contains(key))
    throw Error(ErrorKind::invalid_argument, fmt::format("{}.{}: expected a value, got none", where, key));
  return j.at(key);
}

// A string or boolean field (nlohmann's conversion checks the type exactly).
template <class T>
T field(const nlohmann::json& j, const char* key, const std::string& where) {
  const nlohmann::json& v = member(j, key, where);
  if (!(std::is_same_v<T, bool> ? v.is_boolean() : v.is_string()))
    throw Error(ErrorKind::invalid_argument, fmt::format("{}.{}: expected a {}, got {}", where, key,
                                                         std::is_same_v<T, bool> ? "boolean" : "string", v.dump()));
  return v.get<T>();
}

// A non-negative integer up to `max`: a float, a negative number or one past
// the type's range is an Error, never a wrapped or undefined conversion.
uint64_t count(const nlohmann::json& v, const std::string& where, uint64_t max = UINT32_MAX) {
  if (!v.is_number_unsigned() || v.get<uint64_t>() > max)
    throw Error(ErrorKind::invalid_argument,
                fmt::format("{}: expected an integer from 0 to {}, got {}", where, max, v.dump()));
  return v.get<uint64_t>();
}

std::vector<uint32_t> counts(const nlohmann::json& v, const std::string& where) {
  if (!v.is_array()) throw Error(ErrorKind::invalid_argument, fmt::format("{}: expected a list, got {}", where, v.dump()));
  std::vector<uint32_t> out;
  for (size_t i = 0; i < v.size(); ++i) out.push_back(uint32_t(count(v[i], fmt::format("{}[{}]", where, i))));
  return out;
}

std::vector<std::string> strings(const nlohmann::json& v, const std::string& where) {
  if (!v.is_array()) throw Error(ErrorKind::invalid_argument, fmt::format("{}: expected a list, got {}", where, v.dump()));
  std::vector<std::string> out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string())
      throw Error(ErrorKind::invalid_argument, fmt::format("{}[{}]: expected a string, got {}", where, i, v[i].dump()));
    out.push_back(v[i].get<std::string>());
  }
  return out;
}

// Geometry fields by name, so JSON and explain list them alike.
constexpr std::pair<const char*, uint32_t PlanGeometry::*> kGeometryFields[] = {
    {"workgroup_size", &PlanGeometry::workgroup_size},
    {"query_rows", &PlanGeometry::query_rows},
    {"head_group", &PlanGeometry::head_group},
    {"tile_keys", &PlanGeometry::tile_keys},
    {"splits", &PlanGeometry::splits},
    {"acc_chunks", &PlanGeometry::acc_chunks},
    {"key_lanes", &PlanGeometry::key_lanes},
    {"shared_bytes", &PlanGeometry::shared_bytes},
    {"required_subgroup_size", &PlanGeometry::required_subgroup_size},
    {"kv_stages", &PlanGeometry::kv_stages},
};

}  // namespace

std::string_view to_string(PlanFamily f) {
  for (auto [family, n] : kFamilies)
    if (family == f) return n;
  return "unknown";
}

bool Plan::same_work(const Plan& o) const {
  return family == o.family && variant == o.variant && geometry == o.geometry && dispatches == o.dispatches &&
         scratch_bytes == o.scratch_bytes;
}

std::string to_json(const Plan& plan, int indent) {
  nlohmann::json j;
  j["family"] = std::string(to_string(plan.family));
  j["variant"] = plan.variant;
  j["reason"] = plan.reason;
  j["tuned"] = plan.tuned;
  nlohmann::json g;
  for (auto [name, member] : kGeometryFields) g[name] = plan.geometry.*member;
  j["geometry"] = std::move(g);
  j["dispatches"] = nlohmann::json::array();
  for (const auto& d : plan.dispatches)
    j["dispatches"].push_back({{"module", d.module},
                               {"spec_constants", d.spec_constants},
                               {"required_subgroup_size", d.required_subgroup_size},
                               {"grid", {d.grid[0], d.grid[1], d.grid[2]}}});
  j["scratch_bytes"] = plan.scratch_bytes;
  j["candidates"] = nlohmann::json::array();
  for (const auto& c : plan.candidates)
    j["candidates"].push_back({{"variant", c.variant}, {"eligible", c.eligible}, {"why", c.why}});
  j["warnings"] = plan.warnings;
  return j.dump(indent);
}

Plan plan_from_json(const std::string& text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for a number past a double
    throw Error(ErrorKind::invalid_argument, fmt::format("plan: expected JSON, got a parse error ({})", e.what()));
  }
  Plan p;
  p.family = family_from_string(field<std::string>(j, "family", "plan"));
  p.variant = field<std::string>(j, "variant", "plan");
  p.reason = field<std::string>(j, "reason", "plan");
  p.tuned = field<bool>(j, "tuned", "plan");
  const nlohmann::json& g = member(j, "geometry", "plan");
  for (auto [name, m] : kGeometryFields)
    p.geometry.*m = uint32_t(count(member(g, name, "plan.geometry"), fmt::format("plan.geometry.{}", name)));
  const nlohmann::json& dispatches = member(j, "dispatches", "plan");
  if (!dispatches.is_array() || dispatches.empty())
    throw Error(ErrorKind::invalid_argument,
                fmt::format("plan.dispatches: expected a non-empty list, got {}", dispatches.dump()));
  for (size_t i = 0; i < dispatches.size(); ++i) {
    const std::string where = fmt::format("plan.dispatches[{}]", i);
    PlanDispatch d;
    d.module = field<std::string>(dispatches[i], "module", where);
    d.spec_constants = counts(member(dispatches[i], "spec_constants", where), where + ".spec_constants");
    d.required_subgroup_size =
        uint32_t(count(member(dispatches[i], "required_subgroup_size", where), where + ".required_subgroup_size"));
    const auto grid = counts(member(dispatches[i], "grid", where), where + ".grid");
    if (grid.size() != 3)
      throw Error(ErrorKind::invalid_argument, fmt::format("{}.grid: expected 3 counts, got {}", where, grid.size()));
    std::copy(grid.begin(), grid.end(), d.grid);
    p.dispatches.push_back(std::move(d));
  }
  p.scratch_bytes = count(member(j, "scratch_bytes", "plan"), "plan.scratch_bytes", UINT64_MAX);
  const nlohmann::json& candidates = member(j, "candidates", "plan");
  if (!candidates.is_array())
    throw Error(ErrorKind::invalid_argument, fmt::format("plan.candidates: expected a list, got {}", candidates.dump()));
  for (size_t i = 0; i < candidates.size(); ++i) {
    const std::string where = fmt::format("plan.candidates[{}]", i);
    p.candidates.push_back({field<std::string>(candidates[i], "variant", where),
                            field<bool>(candidates[i], "eligible", where), field<std::string>(candidates[i], "why", where)});
  }
  p.warnings = strings(member(j, "warnings", "plan"), "plan.warnings");
  return p;
}

std::string explain(const Plan& plan) {
  size_t width = 0;
  for (const auto& c : plan.candidates) width = std::max(width, c.variant.size());
  std::string out = planner::explain_candidates(plan.candidates, plan.variant, plan.reason, int(width));
  std::string geometry;
  for (auto [name, member] : kGeometryFields)
    if (plan.geometry.*member) geometry += fmt::format("{}{} {}", geometry.empty() ? "" : ", ", name, plan.geometry.*member);
  out += fmt::format("geometry: {}\n", geometry);
  for (const auto& d : plan.dispatches)
    out += fmt::format("dispatch: {} over [{}, {}, {}] workgroups\n", d.module, d.grid[0], d.grid[1], d.grid[2]);
  if (plan.scratch_bytes) out += fmt::format("scratch: {} bytes\n", plan.scratch_bytes);
  if (plan.tuned) out += "tuned: a tuning-cache entry for this device and shape bucket decided this plan\n";
  return out + planner::explain_warnings(plan.warnings);
}

}  // namespace vkattn

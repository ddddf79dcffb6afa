// DeviceCaps <-> JSON, for `vkattn devices --json` and planning from caps files.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "io/regular_file.hpp"
#include "vkattn/caps.hpp"
#include "vkattn/error.hpp"

namespace vkattn {

using nlohmann::json;

namespace {

// A caps object is two levels deep; a hostile file nested thousands deep would
// overflow the stack in the recursive printing and destruction of the tree.
constexpr int kMaxDepth = 16;
constexpr uint64_t kMaxCapsFileBytes = 16 << 20;

// `expected` names what the text should be, for the parse-error message.
json parse_capped(const std::string& text, const std::string& what, const char* expected) {
  try {
    return json::parse(text, [&](int depth, json::parse_event_t, json&) {
      if (depth > kMaxDepth)
        throw Error(ErrorKind::io, fmt::format("{}: expected JSON nested at most {} deep, got deeper", what, kMaxDepth));
      return true;
    });
  } catch (const json::exception& e) {
    throw Error(ErrorKind::io, fmt::format("{}: expected {}, got a parse error: {}", what, expected, e.what()));
  }
}

// A value for an error message: at most 80 characters of its JSON.
std::string excerpt(const json& v) {
  std::string s = v.dump();
  return s.size() > 80 ? s.substr(0, 77) + "..." : s;
}

// Limits the planners divide by or size loops with: 0 is not a device.
void require_nonzero_limits(const DeviceCaps& c) {
  const std::pair<const char*, uint64_t> limits[] = {
      {"subgroup_size", c.subgroup_size},
      {"min_subgroup_size", c.min_subgroup_size},
      {"max_subgroup_size", c.max_subgroup_size},
      {"max_shared_memory_bytes", c.max_shared_memory_bytes},
      {"max_workgroup_invocations", c.max_workgroup_invocations},
      {"max_storage_buffer_range", c.max_storage_buffer_range},
      {"max_workgroup_size[0]", c.max_workgroup_size[0]},
      {"max_workgroup_size[1]", c.max_workgroup_size[1]},
      {"max_workgroup_size[2]", c.max_workgroup_size[2]},
      {"max_workgroup_count[0]", c.max_workgroup_count[0]},
      {"max_workgroup_count[1]", c.max_workgroup_count[1]},
      {"max_workgroup_count[2]", c.max_workgroup_count[2]},
  };
  for (auto [name, value] : limits)
    if (value == 0) throw Error(ErrorKind::io, fmt::format("caps field '{}': expected >= 1, got 0", name));
}

// nlohmann converts numbers between types silently and, out of range, with
// undefined behaviour (-1 -> 4294967295, 1.5 -> 1, 1e72 -> ?), so a number
// is read only after it is known to fit the field.
template <typename T>
bool fits(const json& v) {
  if constexpr (std::is_integral_v<T>)
    return v.is_number_unsigned() && v.get<uint64_t>() <= std::numeric_limits<T>::max();
  else
    return v.is_number() && std::abs(v.get<double>()) <= std::numeric_limits<T>::max();
}

// One cooperative-matrix shape: {m, n, k, a, b, c, result}.
CoopMatrixShape coop_shape_from_value(const json& s) {
  const bool ok = s.is_object() && s.contains("m") && fits<uint32_t>(s.at("m")) && s.contains("n") &&
                  fits<uint32_t>(s.at("n")) && s.contains("k") && fits<uint32_t>(s.at("k")) &&
                  std::ranges::all_of(std::array{"a", "b", "c", "result"},
                                      [&](const char* key) { return s.contains(key) && s.at(key).is_string(); });
  if (!ok)
    throw Error(ErrorKind::io, fmt::format("caps field 'cooperative_matrix_shapes': expected objects with m, n, k "
                                           "(non-negative integers) and a, b, c, result (strings), got {}",
                                           excerpt(s)));
  return {s.at("m").get<uint32_t>(),    s.at("n").get<uint32_t>(),    s.at("k").get<uint32_t>(),
          s.at("a").get<std::string>(), s.at("b").get<std::string>(), s.at("c").get<std::string>(),
          s.at("result").get<std::string>()};
}

DeviceCaps caps_from_value(const json& j);

}  // namespace

bool DeviceCaps::has_coop_shape(uint32_t m, uint32_t n, uint32_t k, const std::string& ab,
                                const std::string& c) const {
  for (auto& s : cooperative_matrix_shapes)
    if (s.m == m && s.n == n && s.k == k && s.a_type == ab && s.b_type == ab && s.c_type == c && s.result_type == c)
      return true;
  return false;
}

// One list of fields drives both directions, so they cannot drift apart.
template <class Caps, class F>
static void for_each_field(Caps& c, F&& f) {
  f("name", c.name);
  f("type", c.type);
  f("vendor", c.vendor);
  f("vendor_id", c.vendor_id);
  f("device_id", c.device_id);
  f("driver_name", c.driver_name);
  f("driver_info", c.driver_info);
  f("api_version", c.api_version);
  f("subgroup_size", c.subgroup_size);
  f("min_subgroup_size", c.min_subgroup_size);
  f("max_subgroup_size", c.max_subgroup_size);
  f("subgroup_basic", c.subgroup_basic);
  f("subgroup_arithmetic", c.subgroup_arithmetic);
  f("subgroup_shuffle", c.subgroup_shuffle);
  f("subgroup_ballot", c.subgroup_ballot);
  f("subgroup_size_control", c.subgroup_size_control);
  f("shader_float16", c.shader_float16);
  f("shader_int8", c.shader_int8);
  f("shader_int16", c.shader_int16);
  f("storage_16bit", c.storage_16bit);
  f("storage_8bit", c.storage_8bit);
  f("buffer_device_address", c.buffer_device_address);
  f("max_shared_memory_bytes", c.max_shared_memory_bytes);
  f("max_workgroup_invocations", c.max_workgroup_invocations);
  f("max_storage_buffer_range", c.max_storage_buffer_range);
  f("min_storage_buffer_offset_alignment", c.min_storage_buffer_offset_alignment);
  f("max_allocation_bytes", c.max_allocation_bytes);
  f("device_local_bytes", c.device_local_bytes);
  f("max_push_constants_bytes", c.max_push_constants_bytes);
  f("compute_units", c.compute_units);
  f("timestamp_period_ns", c.timestamp_period_ns);
  f("timestamps", c.timestamps);
  f("pipeline_executable_info", c.pipeline_executable_info);
  f("cooperative_matrix_nv", c.cooperative_matrix_nv);
  f("coop_accumulator_quad", c.coop_accumulator_quad);
  f("cooperative_matrix2_nv", c.cooperative_matrix2_nv);
  f("cooperative_matrix2_max_workgroup", c.cooperative_matrix2_max_workgroup);
}

std::string caps_to_json(const DeviceCaps& caps, int indent) {
  json j;
  for_each_field(caps, [&](const char* key, const auto& v) { j[key] = v; });
  j["max_workgroup_size"] = {caps.max_workgroup_size[0], caps.max_workgroup_size[1], caps.max_workgroup_size[2]};
  j["max_workgroup_count"] = {caps.max_workgroup_count[0], caps.max_workgroup_count[1], caps.max_workgroup_count[2]};
  json shapes = json::array();
  for (auto& s : caps.cooperative_matrix_shapes)
    shapes.push_back({{"m", s.m}, {"n", s.n}, {"k", s.k}, {"a", s.a_type}, {"b", s.b_type}, {"c", s.c_type},
                      {"result", s.result_type}});
  j["cooperative_matrix_shapes"] = shapes;
  return j.dump(indent);
}

DeviceCaps caps_from_json(const std::string& text) { return caps_from_value(parse_capped(text, "caps", "a JSON object")); }

namespace {

DeviceCaps caps_from_value(const json& j) {
  if (!j.is_object()) throw Error(ErrorKind::io, "caps: expected a JSON object");
  DeviceCaps c;
  // Absent fields keep DeviceCaps' conservative defaults; present ones must have the right type.
  for_each_field(c, [&](const char* key, auto& v) {
    if (!j.contains(key)) return;
    using T = std::remove_reference_t<decltype(v)>;
    const json& value = j.at(key);
    bool ok;
    if constexpr (std::is_same_v<T, std::string>) ok = value.is_string();
    else if constexpr (std::is_same_v<T, bool>) ok = value.is_boolean();
    else ok = fits<T>(value);
    if (!ok)
      throw Error(ErrorKind::io, fmt::format("caps field '{}': expected {}, got {}", key,
                                             std::is_same_v<T, std::string> ? "a string"
                                             : std::is_same_v<T, bool>      ? "a boolean"
                                             : std::is_integral_v<T>        ? "a non-negative integer"
                                                                            : "a number in float range",
                                             excerpt(value)));
    v = value.get<T>();
  });
  auto read3 = [&](const char* key, uint32_t (&out)[3]) {
    if (!j.contains(key)) return;
    const auto& a = j.at(key);
    bool ok = a.is_array() && a.size() == 3;
    for (size_t i = 0; ok && i < 3; ++i) ok = fits<uint32_t>(a[i]);
    if (!ok)
      throw Error(ErrorKind::io,
                  fmt::format("caps field '{}': expected an array of 3 non-negative integers, got {}", key, excerpt(a)));
    for (size_t i = 0; i < 3; ++i) out[i] = a[i].get<uint32_t>();
  };
  read3("max_workgroup_size", c.max_workgroup_size);
  read3("max_workgroup_count", c.max_workgroup_count);
  if (j.contains("cooperative_matrix_shapes")) {
    if (!j.at("cooperative_matrix_shapes").is_array())
      throw Error(ErrorKind::io, fmt::format("caps field 'cooperative_matrix_shapes': expected an array, got {}",
                                             excerpt(j.at("cooperative_matrix_shapes"))));
    for (auto& s : j.at("cooperative_matrix_shapes")) c.cooperative_matrix_shapes.push_back(coop_shape_from_value(s));
  }
  require_nonzero_limits(c);
  return c;
}

}  // namespace

DeviceCaps load_caps_file(const std::string& path, int index) {
  const std::string what = fmt::format("caps file '{}'", path);
  const std::string text = io::read_regular_file(path, kMaxCapsFileBytes, "caps file");
  // `vkattn devices --json` prints an array of caps objects, each with "index".
  const json j = parse_capped(text, what, "JSON");
  if (!j.is_array()) return caps_from_value(j);
  if (j.empty()) throw Error(ErrorKind::io, fmt::format("caps file '{}': expected at least one device, got []", path));
  if (index < 0) return caps_from_value(j.front());
  std::string seen;
  for (const auto& d : j) {
    if (d.is_object() && d.contains("index") && d.at("index").is_number_unsigned() &&
        d.at("index").get<uint64_t>() == static_cast<uint64_t>(index))
      return caps_from_value(d);
    seen += (seen.empty() ? "" : ", ") + (d.is_object() && d.contains("index") ? excerpt(d.at("index")) : "none");
  }
  throw Error(ErrorKind::io,
              fmt::format("caps file '{}': expected a device with index {}, got indices [{}]", path, index, seen));
}

}  // namespace vkattn

#include "planner/tune_cache.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>

#include "io/regular_file.hpp"
#include "planner/plan_cache.hpp"

namespace vkattn::planner {

namespace {

constexpr uint64_t kFormatVersion = 1;
constexpr uint64_t kMaxFileBytes = 64ull << 20;

std::string entry_key(const std::string& device, std::string_view family, const std::string& bucket) {
  return fmt::format("{}|{}|{}", device, family, bucket);
}

std::mutex g_cache_mutex;  // guards loading; lookups read a table that is never changed once published
std::shared_ptr<const TuneTable> g_table;

}  // namespace

std::string tune_device_key(const DeviceCaps& caps) {
  return fmt::format("{:04x}:{:04x}:{}", caps.vendor_id, caps.device_id, caps.driver_info);
}

TuneTable TuneTable::load(const std::string& path) {
  TuneTable t;
  if (!std::filesystem::exists(path)) return t;
  const std::string text = io::read_regular_file(path, kMaxFileBytes, "tuning cache");
  auto bad = [&](const std::string& what) {
    return Error(ErrorKind::invalid_argument, fmt::format("tuning cache {}: {}", path, what));
  };
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for a number past a double
    throw bad(fmt::format("expected JSON, got a parse error ({})", e.what()));
  }
  // Compared as an unsigned integer: value<int>() of a float past int's range is undefined.
  const bool version_ok = j.is_object() && j.contains("version") && j["version"].is_number_unsigned() &&
                          j["version"].get<uint64_t>() == kFormatVersion;
  if (!version_ok)
    throw bad(fmt::format("version: expected {}, got {}", kFormatVersion,
                          j.is_object() && j.contains("version") ? j["version"].dump() : "none"));
  if (!j.contains("entries") || !j["entries"].is_array()) throw bad("entries: expected a list");
  for (size_t i = 0; i < j["entries"].size(); ++i) {
    const auto& e = j["entries"][i];
    // A tuning value: absent (the planner's choice) or an integer in range,
    // never a float or negative number converted past its range.
    auto tuning_value = [&](const char* key) -> uint32_t {
      if (!e.is_object() || !e.contains(key)) return 0;
      const auto& v = e[key];
      if (!v.is_number_unsigned() || v.get<uint64_t>() > UINT32_MAX)
        throw bad(fmt::format("entries[{}].{}: expected an integer from 0 to {}, got {}", i, key, UINT32_MAX, v.dump()));
      return v.get<uint32_t>();
    };
    const uint32_t splits = tuning_value("splits"), tile_keys = tuning_value("tile_keys"), rows = tuning_value("rows");
    try {
      TuneEntry entry{e.at("variant").get<std::string>(), splits, tile_keys, e.value("ms", 0.0), rows};
      t.entries_[entry_key(e.at("device").get<std::string>(), e.at("family").get<std::string>(),
                           e.at("bucket").get<std::string>())] = std::move(entry);
    } catch (const nlohmann::json::exception& err) {
      throw bad(fmt::format("entries[{}]: expected device, family, bucket, variant (strings) and optional splits, "
                            "tile_keys, rows, ms (numbers), got {} ({})",
                            i, e.dump(), err.what()));
    }
  }
  return t;
}

void TuneTable::save(const std::string& path) const {
  nlohmann::json entries = nlohmann::json::array();
  for (const auto& [key, e] : entries_) {
    const size_t a = key.find('|'), b = key.find('|', a + 1);
    entries.push_back({{"device", key.substr(0, a)},
                       {"family", key.substr(a + 1, b - a - 1)},
                       {"bucket", key.substr(b + 1)},
                       {"variant", e.variant},
                       {"splits", e.splits},
                       {"tile_keys", e.tile_keys},
                       {"rows", e.rows},
                       {"ms", e.ms}});
  }
  const std::filesystem::path p(path);
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
  std::ofstream out(path);
  out << nlohmann::json{{"version", kFormatVersion}, {"entries", entries}}.dump(2) << "\n";
  if (!out) throw Error(ErrorKind::invalid_argument, fmt::format("tuning cache {}: expected a writable file", path));
}

const TuneEntry* TuneTable::find(const DeviceCaps& caps, PlanFamily family, const std::string& bucket) const {
  const auto it = entries_.find(entry_key(tune_device_key(caps), to_string(family), bucket));
  return it == entries_.end() ? nullptr : &it->second;
}

void TuneTable::set(const DeviceCaps& caps, PlanFamily family, const std::string& bucket, TuneEntry entry) {
  entries_[entry_key(tune_device_key(caps), to_string(family), bucket)] = std::move(entry);
}

std::string tune_cache_path() {
  if (const char* p = std::getenv("VKATTN_TUNE_CACHE"); p && *p) return p;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/vkattn/tune.json";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/vkattn/tune.json";
  return "";
}

std::shared_ptr<const TuneTable> process_tune_table() {
  std::lock_guard lock(g_cache_mutex);
  if (!g_table) {
    const std::string path = tune_cache_path();
    try {
      g_table = std::make_shared<const TuneTable>(path.empty() ? TuneTable{} : TuneTable::load(path));
    } catch (const Error& e) {
      // A broken file must not stop attention from running: the rules decide.
      warn_once(fmt::format("{}; the rules decide every plan", e.what()));
      g_table = std::make_shared<const TuneTable>();
    }
  }
  return g_table;
}

void reload_tune_table() {
  {
    std::lock_guard lock(g_cache_mutex);
    g_table.reset();
  }
  invalidate_plans();
}

}  // namespace vkattn::planner

#include "parity_grid.hpp"

#include <algorithm>
#include <filesystem>
#include <map>

#include "test_context.hpp"
#include "test_paths.hpp"
#include "vkattn/caps.hpp"

namespace vkattn::testing {

namespace {

// "name", then "name #2", "name #3" for repeats, so every case has one key.
std::vector<std::string> keys_of(const std::vector<check::CheckCase>& cases) {
  std::map<std::string, int> seen;
  std::vector<std::string> keys;
  for (const auto& c : cases) {
    const int n = ++seen[c.name];
    keys.push_back(n == 1 ? c.name : c.name + " #" + std::to_string(n));
  }
  return keys;
}

struct DeviceGrid {
  std::vector<check::CheckCase> cases;
  std::map<std::string, size_t> by_key;
};

const DeviceGrid& device_grid(const std::string& family) {
  static std::map<std::string, DeviceGrid> grids;
  auto it = grids.find(family);
  if (it == grids.end()) {
    DeviceGrid g;
    g.cases = check::check_cases(family, shared_context().caps(), check::GridSize::ci);
    const auto keys = keys_of(g.cases);
    for (size_t i = 0; i < keys.size(); ++i) g.by_key[keys[i]] = i;
    it = grids.emplace(family, std::move(g)).first;
  }
  return it->second;
}

}  // namespace

const std::vector<std::string>& registered_cases(const std::string& family) {
  static std::map<std::string, std::vector<std::string>> registered;
  auto it = registered.find(family);
  if (it == registered.end()) {
    std::vector<std::string> all;
    const std::filesystem::path dir = std::filesystem::path(caps_path("lavapipe.json")).parent_path();
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::directory_iterator(dir))
      if (e.path().extension() == ".json") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files)
      for (const auto& key : keys_of(check::check_cases(family, load_caps_file(f.string()), check::GridSize::ci)))
        if (std::find(all.begin(), all.end(), key) == all.end()) all.push_back(key);
    it = registered.emplace(family, std::move(all)).first;
  }
  return it->second;
}

const check::CheckCase* device_case(const std::string& family, const std::string& key) {
  const DeviceGrid& g = device_grid(family);
  const auto it = g.by_key.find(key);
  return it == g.by_key.end() ? nullptr : &g.cases[it->second];
}

std::vector<std::string> unregistered_device_cases(const std::string& family) {
  std::vector<std::string> missing;
  const auto& registered = registered_cases(family);
  for (const auto& [key, index] : device_grid(family).by_key)
    if (std::find(registered.begin(), registered.end(), key) == registered.end()) missing.push_back(key);
  return missing;
}

std::string parity_test_name(const std::string& family, size_t i) {
  std::string n = std::to_string(i) + "_" + registered_cases(family).at(i);
  for (auto& ch : n)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

}  // namespace vkattn::testing

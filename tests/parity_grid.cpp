#include "parity_grid.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "reference/tolerance.hpp"
#include "test_paths.hpp"

namespace vkattn::testing {

std::vector<std::string> case_keys(const std::vector<std::string>& names) {
  std::map<std::string, int> seen;
  std::vector<std::string> keys;
  for (const auto& name : names) {
    const int n = ++seen[name];
    keys.push_back(n == 1 ? name : name + " #" + std::to_string(n));
  }
  return keys;
}

std::vector<std::string> registered_keys(const std::function<std::vector<std::string>(const DeviceCaps&)>& names_for) {
  std::vector<std::string> all;
  const std::filesystem::path dir = std::filesystem::path(caps_path("lavapipe.json")).parent_path();
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files)
    for (const auto& key : case_keys(names_for(load_caps_file(f.string()))))
      if (std::find(all.begin(), all.end(), key) == all.end()) all.push_back(key);
  return all;
}

RegisteredGrid<check::CheckCase>& family_grid(const std::string& family) {
  static std::map<std::string, RegisteredGrid<check::CheckCase>> grids;
  auto it = grids.find(family);
  if (it == grids.end())
    it = grids
             .emplace(family, RegisteredGrid<check::CheckCase>(
                                  [family](const DeviceCaps& caps) {
                                    return check::check_cases(family, caps, check::GridSize::ci);
                                  },
                                  [](const check::CheckCase& c) { return c.name; }))
             .first;
  return it->second;
}

void expect_matches_oracle(RegisteredGrid<check::CheckCase>& grid, Context& ctx, size_t i) {
  const check::CheckCase* c = grid.device_case(ctx.caps(), i);
  if (!c) GTEST_SKIP() << grid.keys().at(i) << ": does not apply to " << ctx.caps().name << " (a variant it cannot run)";
  auto r = c->run(ctx, {});
  EXPECT_TRUE(r.error.empty()) << r.error;
  EXPECT_TRUE(r.passed) << c->name << " variant " << r.variant << ": " << reference::to_string(r.cmp, r.tol);
}

}  // namespace vkattn::testing

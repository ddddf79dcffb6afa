// The parity tests' cases, registered without opening a Vulkan device (so
// `vkattn_tests --gtest_list_tests` and ctest discovery need none): a grid's
// registered cases are the union of its grids for the shipped caps files
// (caps/*.json); at run time a case the test device's own grid lacks is
// reported as skipped with the reason, and a device case missing from the
// union fails a test.
#pragma once

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "check/check_case.hpp"
#include "test_context.hpp"
#include "vkattn/caps.hpp"

namespace vkattn::testing {

// "name", then "name #2", "name #3" for repeats, so every case has one key.
std::vector<std::string> case_keys(const std::vector<std::string>& names);
// The keys of `names_for(caps)` over every shipped caps file, in first-seen order.
std::vector<std::string> registered_keys(const std::function<std::vector<std::string>(const DeviceCaps&)>& names_for);

// A grid of cases (of any type) made from a device's caps, registered by key.
template <class Case>
class RegisteredGrid {
 public:
  using Cases = std::function<std::vector<Case>(const DeviceCaps&)>;
  using Name = std::function<std::string(const Case&)>;
  RegisteredGrid(Cases cases, Name name) : cases_(std::move(cases)), name_(std::move(name)) {}

  const std::vector<std::string>& keys() {
    if (!keys_) keys_ = registered_keys([this](const DeviceCaps& caps) { return names(cases_(caps)); });
    return *keys_;
  }
  // Registered case i on the test device (whose caps are `caps`), or nullptr where its grid lacks it.
  const Case* device_case(const DeviceCaps& caps, size_t i) {
    const auto& device = device_keys(caps);
    for (size_t j = 0; j < device.size(); ++j)
      if (device[j] == keys().at(i)) return &device_cases_[j];
    return nullptr;
  }
  // The device's cases no caps file registers (each would go unrun).
  std::vector<std::string> unregistered(const DeviceCaps& caps) {
    std::vector<std::string> missing;
    for (const auto& key : device_keys(caps))
      if (std::find(keys().begin(), keys().end(), key) == keys().end()) missing.push_back(key);
    return missing;
  }
  std::string test_name(size_t i) { return param_test_name(i, keys().at(i)); }

 private:
  std::vector<std::string> names(const std::vector<Case>& cases) const {
    std::vector<std::string> out;
    for (const auto& c : cases) out.push_back(name_(c));
    return out;
  }
  // The test device's grid, made once (a test binary has one device per grid).
  const std::vector<std::string>& device_keys(const DeviceCaps& caps) {
    if (!device_keys_) {
      device_cases_ = cases_(caps);
      device_keys_ = case_keys(names(device_cases_));
    }
    return *device_keys_;
  }
  Cases cases_;
  Name name_;
  std::optional<std::vector<std::string>> keys_, device_keys_;
  std::vector<Case> device_cases_;
};

// The CI grid of a `vkattn check` family.
RegisteredGrid<check::CheckCase>& family_grid(const std::string& family);
// Runs registered case i on ctx's device against the float64 oracle (skipped where its grid lacks the case).
void expect_matches_oracle(RegisteredGrid<check::CheckCase>& grid, Context& ctx, size_t i);

}  // namespace vkattn::testing

// The parity tests' cases, registered without opening a Vulkan device (so
// `vkattn_tests --gtest_list_tests` and ctest discovery need none): a family's
// CI grid is the union of its grids for the shipped caps files (caps/*.json);
// at run time a case the test device's own grid lacks is reported as skipped
// with the reason, and a device case missing from the union fails a test.
#pragma once

#include <string>
#include <vector>

#include "check/check_case.hpp"

namespace vkattn::testing {

// "name" or "name #k" (the k-th case of that name), in first-seen order.
const std::vector<std::string>& registered_cases(const std::string& family);
// The test device's case registered as `key`, or nullptr when it does not apply to the device.
const check::CheckCase* device_case(const std::string& family, const std::string& key);
// Device cases no shipped caps file's grid has (each would go unrun).
std::vector<std::string> unregistered_device_cases(const std::string& family);
// A gtest parameter name for registered case i: its index and name, alphanumeric.
std::string parity_test_name(const std::string& family, size_t i);

}  // namespace vkattn::testing

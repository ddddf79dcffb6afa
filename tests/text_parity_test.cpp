// GPU vs float64 oracle for every case of the CI grid (the same grid
// `vkattn check` runs), one test per case, registered without a device
// (tests/parity_grid.hpp).
#include <gtest/gtest.h>

#include "parity_grid.hpp"
#include "test_context.hpp"

namespace vkattn {
namespace {

class TextParity : public testing::GpuTest, public ::testing::WithParamInterface<size_t> {};

TEST_P(TextParity, MatchesOracle) {
  const std::string& key = testing::registered_cases("text").at(GetParam());
  const check::CheckCase* c = testing::device_case("text", key);
  if (!c) GTEST_SKIP() << key << ": does not apply to " << ctx().caps().name << " (a variant it cannot run)";
  auto r = c->run(ctx(), {});
  EXPECT_TRUE(r.error.empty()) << r.error;
  EXPECT_TRUE(r.passed) << c->name << " variant " << r.variant << ": " << reference::to_string(r.cmp, r.tol);
}

INSTANTIATE_TEST_SUITE_P(Grid, TextParity, ::testing::Range<size_t>(0, testing::registered_cases("text").size()),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           return testing::parity_test_name("text", info.param);
                         });

class ParityGrid : public testing::GpuTest {};

// Every case of the device's grid is registered, so none goes unrun.
TEST_F(ParityGrid, EveryDeviceCaseIsRegistered) {
  for (const char* family : {"text", "vision", "audio"})
    EXPECT_TRUE(testing::unregistered_device_cases(family).empty())
        << family << ": " << ::testing::PrintToString(testing::unregistered_device_cases(family));
}

}  // namespace
}  // namespace vkattn

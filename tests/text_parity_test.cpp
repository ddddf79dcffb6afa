// GPU vs float64 oracle for every case of the CI grid (the same grid
// `vkattn check` runs), one test per case, registered without a device
// (tests/parity_grid.hpp).
#include <gtest/gtest.h>

#include "parity_grid.hpp"
#include "test_context.hpp"

namespace vkattn {
namespace {

class TextParity : public testing::GpuTest, public ::testing::WithParamInterface<size_t> {};

TEST_P(TextParity, MatchesOracle) { testing::expect_matches_oracle(testing::family_grid("text"), ctx(), GetParam()); }

INSTANTIATE_TEST_SUITE_P(Grid, TextParity, ::testing::Range<size_t>(0, testing::family_grid("text").keys().size()),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           return testing::family_grid("text").test_name(info.param);
                         });

class ParityGrid : public testing::GpuTest {};

// Every case of the device's grid is registered, so none goes unrun.
TEST_F(ParityGrid, EveryDeviceCaseIsRegistered) {
  for (const char* family : {"text", "vision", "audio"}) {
    const auto missing = testing::family_grid(family).unregistered(ctx().caps());
    EXPECT_TRUE(missing.empty()) << family << ": " << ::testing::PrintToString(missing);
  }
}

}  // namespace
}  // namespace vkattn

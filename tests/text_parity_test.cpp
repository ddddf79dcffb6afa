// GPU vs float64 oracle for every case of the CI grid (the same grid
// `vkattn check` runs), one test per case.
#include <gtest/gtest.h>

#include "check/check_case.hpp"
#include "test_context.hpp"

namespace vkattn {
namespace {

class TextParity : public testing::GpuTest, public ::testing::WithParamInterface<size_t> {};

const std::vector<check::CheckCase>& grid() {
  static auto g = check::text_check_cases(testing::shared_context().caps(), check::GridSize::ci);
  return g;
}

TEST_P(TextParity, MatchesOracle) {
  const auto& c = grid().at(GetParam());
  auto r = c.run(ctx(), {});
  EXPECT_TRUE(r.error.empty()) << r.error;
  EXPECT_TRUE(r.passed) << c.name << " variant " << r.variant << ": "
                        << reference::to_string(r.cmp, r.tol);
}

INSTANTIATE_TEST_SUITE_P(Grid, TextParity, ::testing::Range<size_t>(0, grid().size()),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           return testing::param_test_name(info.param, grid().at(info.param).name);
                         });

}  // namespace
}  // namespace vkattn

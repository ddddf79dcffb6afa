// GPU vs float64 oracle for every case of the vision and audio CI grids (the
// grids `vkattn check --family vision|audio` run), one test per case:
//   vision: every variant x dtype forced, the planner's choices across head
//     dims 64-256, patch counts off every tile width, HPD layouts, the
//     tensor-core engine's plain-GLSL build (head dims off 16, f32 staged as
//     f16, both layouts, partial row and key tiles), posembed;
//   audio: T not a multiple of W, T < W, both visibility modes, future
//     context, caps on and off, unequal per-dim scales, rows seeing no key.
#include <gtest/gtest.h>

#include <functional>
#include <map>

#include "check/check_case.hpp"
#include "test_context.hpp"

namespace vkattn {
namespace {

const std::vector<check::CheckCase>& cases(const std::string& family) {
  static std::map<std::string, std::vector<check::CheckCase>> grids;
  auto it = grids.find(family);
  if (it == grids.end())
    it = grids.emplace(family, check::check_cases(family, testing::shared_context().caps(), check::GridSize::ci))
             .first;
  return it->second;
}

void run_case(Context& ctx, const check::CheckCase& c) {
  auto r = c.run(ctx, {});
  EXPECT_TRUE(r.error.empty()) << r.error;
  EXPECT_TRUE(r.passed) << c.name << " variant " << r.variant << ": " << reference::to_string(r.cmp, r.tol);
}

std::function<std::string(const ::testing::TestParamInfo<size_t>&)> namer(const char* family) {
  return [family](const ::testing::TestParamInfo<size_t>& info) {
    return testing::param_test_name(info.param, cases(family).at(info.param).name);
  };
}

class VisionParity : public testing::GpuTest, public ::testing::WithParamInterface<size_t> {};
class AudioParity : public testing::GpuTest, public ::testing::WithParamInterface<size_t> {};

TEST_P(VisionParity, MatchesOracle) { run_case(ctx(), cases("vision").at(GetParam())); }
TEST_P(AudioParity, MatchesOracle) { run_case(ctx(), cases("audio").at(GetParam())); }

INSTANTIATE_TEST_SUITE_P(Grid, VisionParity, ::testing::Range<size_t>(0, cases("vision").size()), namer("vision"));
INSTANTIATE_TEST_SUITE_P(Grid, AudioParity, ::testing::Range<size_t>(0, cases("audio").size()), namer("audio"));

}  // namespace
}  // namespace vkattn

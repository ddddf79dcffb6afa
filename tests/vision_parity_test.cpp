// GPU vs float64 oracle for every case of the vision and audio CI grids (the
// grids `vkattn check --family vision|audio` run), one test per case:
//   vision: every variant x dtype forced, the planner's choices across head
//     dims 64-256, patch counts off every tile width, HPD layouts, posembed;
//   audio: T not a multiple of W, T < W, both visibility modes, future
//     context, caps on and off, unequal per-dim scales, rows seeing no key.
#include <gtest/gtest.h>

#include <functional>

#include "parity_grid.hpp"
#include "test_context.hpp"

namespace vkattn {
namespace {

// Registered without a device (tests/parity_grid.hpp); a case the device's
// grid lacks is reported as skipped.
void run_case(Context& ctx, const std::string& family, size_t i) {
  const std::string& key = testing::registered_cases(family).at(i);
  const check::CheckCase* c = testing::device_case(family, key);
  if (!c) GTEST_SKIP() << key << ": does not apply to " << ctx.caps().name << " (a variant it cannot run)";
  auto r = c->run(ctx, {});
  EXPECT_TRUE(r.error.empty()) << r.error;
  EXPECT_TRUE(r.passed) << c->name << " variant " << r.variant << ": " << reference::to_string(r.cmp, r.tol);
}

std::function<std::string(const ::testing::TestParamInfo<size_t>&)> namer(const char* family) {
  return [family](const ::testing::TestParamInfo<size_t>& info) { return testing::parity_test_name(family, info.param); };
}

class VisionParity : public testing::GpuTest, public ::testing::WithParamInterface<size_t> {};
class AudioParity : public testing::GpuTest, public ::testing::WithParamInterface<size_t> {};

TEST_P(VisionParity, MatchesOracle) { run_case(ctx(), "vision", GetParam()); }
TEST_P(AudioParity, MatchesOracle) { run_case(ctx(), "audio", GetParam()); }

INSTANTIATE_TEST_SUITE_P(Grid, VisionParity, ::testing::Range<size_t>(0, testing::registered_cases("vision").size()), namer("vision"));
INSTANTIATE_TEST_SUITE_P(Grid, AudioParity, ::testing::Range<size_t>(0, testing::registered_cases("audio").size()), namer("audio"));

}  // namespace
}  // namespace vkattn

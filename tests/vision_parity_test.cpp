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

#include "parity_grid.hpp"
#include "test_context.hpp"

namespace vkattn {
namespace {

// Registered without a device (tests/parity_grid.hpp); a case the device's
// grid lacks is reported as skipped.
std::function<std::string(const ::testing::TestParamInfo<size_t>&)> namer(const char* family) {
  return [family](const ::testing::TestParamInfo<size_t>& info) { return testing::family_grid(family).test_name(info.param); };
}

class VisionParity : public testing::GpuTest, public ::testing::WithParamInterface<size_t> {};
class AudioParity : public testing::GpuTest, public ::testing::WithParamInterface<size_t> {};

TEST_P(VisionParity, MatchesOracle) { testing::expect_matches_oracle(testing::family_grid("vision"), ctx(), GetParam()); }
TEST_P(AudioParity, MatchesOracle) { testing::expect_matches_oracle(testing::family_grid("audio"), ctx(), GetParam()); }

INSTANTIATE_TEST_SUITE_P(Grid, VisionParity, ::testing::Range<size_t>(0, testing::family_grid("vision").keys().size()),
                         namer("vision"));
INSTANTIATE_TEST_SUITE_P(Grid, AudioParity, ::testing::Range<size_t>(0, testing::family_grid("audio").keys().size()),
                         namer("audio"));

}  // namespace
}  // namespace vkattn

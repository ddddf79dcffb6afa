// The accumulator-layout check every context runs where the device has
// cooperative matrices (DeviceCaps::coop_accumulator_quad), and what the
// planner makes of its answer.
#include <gtest/gtest.h>

#include "planner/text_planner.hpp"
#include "test_context.hpp"
#include "ops/fragment_layout_probe.hpp"

namespace vkattn {
namespace {

TEST(FragmentLayoutProbe, AnswerIsTheContextsAndDecidesTheTensorCoreRows) {
  Context& ctx = testing::shared_context();
  const DeviceCaps& caps = ctx.caps();
  // No cooperative matrices: nothing is dispatched and the answer is no.
  if (!caps.cooperative_matrix_nv) EXPECT_FALSE(caps.coop_accumulator_quad);
  // Asked again, the device answers as it did when the context was made.
  EXPECT_EQ(ops::fragment_layout_holds(ctx), caps.coop_accumulator_quad);
  const planner::TextShape prefill{1, 256, 8, 2, 64, 256, DType::f16, DType::f16};
  const auto plan = planner::plan_text(caps, prefill);
  if (!caps.coop_accumulator_quad) EXPECT_NE(plan.variant->module, "flash_coopmat") << plan.variant->name;
}

}  // namespace
}  // namespace vkattn

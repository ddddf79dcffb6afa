// Split decode where the last split of each row combines the partials (no
// reduce dispatch): the arrival counters must be back at zero after every
// call, so two calls in one recording, replayed with new queries each time,
// all match the float64 oracle; with indirect dispatch the reduce stays.
#include <gtest/gtest.h>

#include <random>

#include "check/host_tensor.hpp"
#include "reference/text_reference.hpp"
#include "reference/tolerance.hpp"
#include "shaders/text_attention_interface.h"
#include "test_context.hpp"
#include "vkattn/plan.hpp"
#include "vkattn/recorder.hpp"
#include "vkattn/text.hpp"

namespace vkattn {
namespace {

class SplitCombine : public testing::GpuTest {
 protected:
  static constexpr uint32_t kBatch = 2, kHeads = 8, kKvHeads = 2, kDim = 64, kLen = 300;

  void SetUp() override {
    testing::GpuTest::SetUp();
    p_.batch = kBatch;
    p_.num_heads = kHeads;
    p_.num_kv_heads = kKvHeads;
    p_.head_dim = kDim;
    p_.kv_capacity = kLen;
    p_.kv_len = {kLen, 211};  // the second sequence's last split sees fewer keys
    p_.start_pos = {kLen - 1, 210};
    p_.causal = true;
    const Shape kv{kBatch, kLen, kKvHeads, kDim};
    const check::host::Values k = f16_values(element_count(kv), 1.0f), v = f16_values(element_count(kv), 1.0f);
    k_ = k.values;
    v_ = v.values;
    t_.k = check::host::upload(ctx(), DType::f16, kv, k.bytes);
    t_.v = check::host::upload(ctx(), DType::f16, kv, v.bytes);
  }

  // f16 normal values and their bytes (queries sharpened, so a split that is left out shows).
  check::host::Values f16_values(size_t n, float stddev) {
    return check::host::to_storage(DType::f16, check::host::gaussian(rng_, n, stddev));
  }
  TextAttentionTensors call(Tensor q, Tensor out) const {
    TextAttentionTensors t = t_;
    t.q = std::move(q);
    t.out = std::move(out);
    return t;
  }
  void expect_oracle(const Tensor& out, const std::vector<float>& q, const std::string& what) {
    const auto tol = reference::tolerance_for(DType::f16, DType::f16, DType::f32);
    const auto cmp = reference::compare(ctx().download_as<float>(out), reference::text_attention(p_, q, k_, v_), tol);
    EXPECT_TRUE(cmp.passed) << what << ": " << reference::to_string(cmp, tol);
  }
  PlanOptions split_into(const std::string& variant, uint32_t splits) const {
    PlanOptions o = testing::forced(variant);
    o.splits = splits;
    o.use_tuning_cache = false;
    return o;
  }

  std::mt19937 rng_{11};
  TextAttentionParams p_;
  TextAttentionTensors t_;
  std::vector<float> k_, v_;
};

TEST_F(SplitCombine, TwoCallsReplayedThreeTimesMatchTheOracle) {
  for (const char* variant : {"decode_flash_f16", "decode_stream_emulated_f16"}) {
    const PlanOptions o = split_into(variant, 4);
    const Tensor q1 = ctx().tensor(DType::f16, {kBatch, 1, kHeads, kDim});
    const Tensor q2 = ctx().tensor(DType::f16, {kBatch, 1, kHeads, kDim});
    const Tensor out1 = ctx().tensor(DType::f32, {kBatch, 1, kHeads, kDim});
    const Tensor out2 = ctx().tensor(DType::f32, {kBatch, 1, kHeads, kDim});
    const Plan plan = plan_text(ctx().caps(), p_, text_tensor_types(call(q1, out1), ctx().caps()), o);
    ASSERT_EQ(plan.geometry.splits, 4u) << variant;
    ASSERT_EQ(plan.dispatches.size(), 1u) << variant << ": no reduce dispatch";
    EXPECT_EQ(plan.dispatches[0].spec_constants[TEXT_SC_SPLIT], uint32_t(TEXT_SPLIT_LAST_COMBINES));

    Recorder rec(ctx());
    EXPECT_EQ(text_attention(rec, p_, call(q1, out1), o).splits, 4u);
    text_attention(rec, p_, call(q2, out2), o);
    for (int replay = 0; replay < 3; ++replay) {
      const check::host::Values a = f16_values(size_t(kBatch) * kHeads * kDim, 3.0f);
      const check::host::Values b = f16_values(a.values.size(), 3.0f);
      ctx().upload(q1, a.bytes);
      ctx().upload(q2, b.bytes);
      rec.run();
      const std::string what = std::string(variant) + " replay " + std::to_string(replay);
      expect_oracle(out1, a.values, what + " first call");
      expect_oracle(out2, b.values, what + " second call");
    }
  }
}

TEST_F(SplitCombine, IndirectDispatchKeepsTheReduce) {
  const PlanOptions o = split_into("decode_flash_f16", 4);
  const Tensor q = ctx().tensor(DType::f16, {kBatch, 1, kHeads, kDim});
  const Tensor out = ctx().tensor(DType::f32, {kBatch, 1, kHeads, kDim});
  TextAttentionTensors t = call(q, out);
  const TextCallInfo direct = run_text_attention(ctx(), p_, t, o);
  t.indirect = ctx().tensor(DType::u32, {3});
  ctx().upload(t.indirect, std::vector<uint32_t>{direct.workgroups[0], direct.workgroups[1], direct.workgroups[2]});
  const Plan plan = plan_text(ctx().caps(), p_, text_tensor_types(t, ctx().caps()), o);
  ASSERT_EQ(plan.dispatches.size(), 2u);
  EXPECT_EQ(plan.dispatches[0].spec_constants[TEXT_SC_SPLIT], uint32_t(TEXT_SPLIT_PARTIALS));
  EXPECT_EQ(plan.dispatches[1].module, "text_split_reduce");
  const check::host::Values a = f16_values(size_t(kBatch) * kHeads * kDim, 3.0f);
  ctx().upload(q, a.bytes);
  run_text_attention(ctx(), p_, t, o);
  expect_oracle(out, a.values, "indirect");
}

}  // namespace
}  // namespace vkattn

// Split decode where the last split of each row combines the partials (no
// reduce dispatch): the arrival counters must be back at zero after every
// call, so two calls in one recording, replayed with new queries each time,
// all match the float64 oracle; with indirect dispatch the reduce stays.
#include <gtest/gtest.h>

#include <random>

#include "reference/rounding.hpp"
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
    k_ = values(size_t(kBatch) * kLen * kKvHeads * kDim);
    v_ = values(k_.size());
    t_.k = ctx().tensor(DType::f16, {kBatch, kLen, kKvHeads, kDim});
    t_.v = ctx().tensor(DType::f16, {kBatch, kLen, kKvHeads, kDim});
    ctx().upload(t_.k, bits(k_));
    ctx().upload(t_.v, bits(v_));
  }

  // f16-exact normal values, sharpened so a split that is left out shows.
  std::vector<float> values(size_t n, float scale = 1.0f) {
    std::normal_distribution<float> dist(0.0f, scale);
    std::vector<float> v(n);
    for (auto& x : v) x = reference::round_to(DType::f16, dist(rng_));
    return v;
  }
  static std::vector<uint16_t> bits(const std::vector<float>& v) {
    std::vector<uint16_t> out(v.size());
    for (size_t i = 0; i < v.size(); ++i) out[i] = reference::float_to_f16(v[i]);
    return out;
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
      const std::vector<float> a = values(size_t(kBatch) * kHeads * kDim, 3.0f), b = values(a.size(), 3.0f);
      ctx().upload(q1, bits(a));
      ctx().upload(q2, bits(b));
      rec.run();
      const std::string what = std::string(variant) + " replay " + std::to_string(replay);
      expect_oracle(out1, a, what + " first call");
      expect_oracle(out2, b, what + " second call");
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
  const std::vector<float> a = values(size_t(kBatch) * kHeads * kDim, 3.0f);
  ctx().upload(q, bits(a));
  run_text_attention(ctx(), p_, t, o);
  expect_oracle(out, a, "indirect");
}

}  // namespace
}  // namespace vkattn

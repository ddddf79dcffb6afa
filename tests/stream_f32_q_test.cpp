// decode_stream with f32 Q keeps Q to f32 precision (two f16 parts per
// element and a power of two per head) instead of rounding it to f16, so the
// planner may choose it without allow_reduced_precision: Q far past f16's
// range or deep in its subnormals (with a scale that brings the scores back),
// where a rounded Q fails the oracle, still matches it.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "check/host_tensor.hpp"
#include "reference/rounding.hpp"
#include "reference/text_reference.hpp"
#include "reference/tolerance.hpp"
#include "test_context.hpp"
#include "vkattn/plan.hpp"
#include "vkattn/recorder.hpp"
#include "vkattn/text.hpp"

namespace vkattn {
namespace {

class StreamF32Q : public testing::GpuTest {};

constexpr uint32_t kHeads = 8, kKvHeads = 2, kDim = 64, kLen = 200;
constexpr const char* kVariant = "decode_stream_emulated_f16kv";

TEST_F(StreamF32Q, KeepsQToF32PrecisionWithoutPermission) {
  TextAttentionParams p;
  p.num_heads = kHeads;
  p.num_kv_heads = kKvHeads;
  p.head_dim = kDim;
  p.kv_capacity = kLen;
  p.kv_len = {kLen};
  p.start_pos = {kLen - 1};
  p.causal = true;

  std::mt19937 rng(5);
  const Shape kv{1, kLen, kKvHeads, kDim};
  const check::host::Values k = check::host::to_storage(DType::f16, check::host::gaussian(rng, element_count(kv), 1.0f));
  const check::host::Values v = check::host::to_storage(DType::f16, check::host::gaussian(rng, element_count(kv), 1.0f));
  const std::vector<float> q = check::host::gaussian(rng, size_t(kHeads) * kDim, 4.0f);

  TextAttentionTensors t;
  t.q = ctx().tensor(DType::f32, {1, 1, kHeads, kDim});
  t.k = check::host::upload(ctx(), DType::f16, kv, k.bytes);
  t.v = check::host::upload(ctx(), DType::f16, kv, v.bytes);
  t.out = ctx().tensor(DType::f32, {1, 1, kHeads, kDim});

  const PlanOptions o = testing::forced(kVariant);  // strict, and no allow_reduced_precision
  ASSERT_EQ(plan_text(ctx().caps(), p, text_tensor_types(t, ctx().caps()), o).variant, kVariant);

  const auto tol = reference::tolerance_for(DType::f32, DType::f16, DType::f32);
  // Q times `factor`, the scale divided by it: the same scores each time.
  for (const float factor : {1.0f, 1e7f, 1e-7f}) {
    TextAttentionParams at = p;
    at.scale = 1.0f / (8.0f * factor);
    std::vector<float> scaled(q.size()), rounded(q.size());
    for (size_t i = 0; i < q.size(); ++i) {
      scaled[i] = q[i] * factor;
      rounded[i] = reference::round_to(DType::f16, scaled[i]);
    }
    const auto want = reference::text_attention(at, scaled, k.values, v.values);
    if (factor != 1.0f) {
      const auto by_rounding = reference::text_attention(at, rounded, k.values, v.values);
      EXPECT_FALSE(reference::compare(std::vector<float>(by_rounding.begin(), by_rounding.end()), want, tol).passed)
          << "Q times " << factor << ": a rounded Q must fail this case";
    }
    ctx().upload(t.q, scaled);
    run_text_attention(ctx(), at, t, o);
    const auto got = reference::compare(ctx().download_as<float>(t.out), want, tol);
    EXPECT_TRUE(got.passed) << "Q times " << factor << ": " << reference::to_string(got, tol);
  }
}

}  // namespace
}  // namespace vkattn

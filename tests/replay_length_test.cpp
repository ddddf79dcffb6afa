// A decode step recorded once at a short length and replayed at a long one,
// the length read from a GPU buffer: the split-KV grid must be sized for the
// cache, not for the length the host saw at record time, and every replay must
// match the float64 oracle.
#include <gtest/gtest.h>

#include <random>

#include "reference/rounding.hpp"
#include "reference/text_reference.hpp"
#include "reference/tolerance.hpp"
#include "test_context.hpp"
#include "vkattn/recorder.hpp"
#include "vkattn/text.hpp"

namespace vkattn {
namespace {

class ReplayLength : public testing::GpuTest {};

std::vector<float> random_f16_values(std::mt19937& rng, size_t n) {
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = reference::round_to(DType::f16, dist(rng));
  return v;
}

std::vector<uint16_t> f16_bits(const std::vector<float>& v) {
  std::vector<uint16_t> bits(v.size());
  for (size_t i = 0; i < v.size(); ++i) bits[i] = reference::float_to_f16(v[i]);
  return bits;
}

TEST_F(ReplayLength, RecordedAtOneThousandReplayedAtOneHundredThousand) {
  constexpr uint32_t kCapacity = 100000, kHeads = 4, kDim = 64;
  TextAttentionParams p;
  p.num_heads = kHeads;
  p.num_kv_heads = 1;
  p.head_dim = kDim;
  p.kv_capacity = kCapacity;
  p.kv_len = {1000};
  p.start_pos = {999};
  p.causal = true;

  std::mt19937 rng(7);
  std::vector<float> q = random_f16_values(rng, kHeads * kDim);
  for (auto& x : q) x *= 3.0f;  // sharp softmax: a wrong key range shows
  const std::vector<float> k = random_f16_values(rng, size_t(kCapacity) * kDim);
  const std::vector<float> v = random_f16_values(rng, size_t(kCapacity) * kDim);
  TextAttentionTensors t;
  t.q = ctx().tensor(DType::f32, {1, 1, kHeads, kDim});
  t.k = ctx().tensor(DType::f16, {1, kCapacity, 1, kDim});
  t.v = ctx().tensor(DType::f16, {1, kCapacity, 1, kDim});
  t.out = ctx().tensor(DType::f32, {1, 1, kHeads, kDim});
  t.kv_len = ctx().tensor(DType::u32, {1});
  t.start_pos = ctx().tensor(DType::u32, {1});
  ctx().upload(t.q, q);
  ctx().upload(t.k, f16_bits(k));
  ctx().upload(t.v, f16_bits(v));

  Recorder rec(ctx());
  const TextCallInfo info = text_attention(rec, p, t);
  // Sized for the cache: the 1000-key hint alone would give far fewer splits.
  TextAttentionTensors hint_only = t;
  hint_only.kv_len = {};
  Recorder probe(ctx());
  const TextCallInfo hinted = text_attention(probe, p, hint_only);
  EXPECT_GT(info.splits, hinted.splits) << info.variant;

  const auto tol = reference::tolerance_for(DType::f32, DType::f16, DType::f32);
  for (uint32_t len : {1000u, 100000u, 4097u}) {
    ctx().upload(t.kv_len, std::vector<uint32_t>{len});
    ctx().upload(t.start_pos, std::vector<uint32_t>{len - 1});
    rec.run();
    const auto got = ctx().download_as<float>(t.out);
    TextAttentionParams at = p;
    at.kv_len = {len};
    at.start_pos = {len - 1};
    const auto want = reference::text_attention(at, q, k, v);
    const auto cmp = reference::compare(got, want, tol);
    EXPECT_TRUE(cmp.passed) << "kv_len " << len << " " << info.variant << ": " << reference::to_string(cmp, tol);
  }
}

}  // namespace
}  // namespace vkattn

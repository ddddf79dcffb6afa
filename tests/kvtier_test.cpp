// Tiered (hot/cold) KV caches: the shared tier rule, the oracle against a
// merged single-tier cache, every engine against the oracle (the kvcache
// family's cases), and the errors for bad tiered input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>

#include "check/host_tensor.hpp"
#include "check/kvtier_cases.hpp"
#include "check/large_pool_case.hpp"
#include "expect_error.hpp"
#include "parity_grid.hpp"
#include "ops/text/text_validate.hpp"
#include "planner/text_planner.hpp"
#include "planner/text_variants.hpp"
#include "reference/text_reference.hpp"
#include "shaders/text_kv_tier.h"
#include "test_context.hpp"
#include "vk/recorder_impl.hpp"
#include "vkattn/recorder.hpp"
#include "vkattn/text.hpp"

namespace vkattn {
namespace {


TEST(KvTierRule, LastHotWindowKeysAreHot) {
  EXPECT_EQ(text::text_tier_hot_from(100, 32), 68u);
  EXPECT_EQ(text::text_tier_hot_from(20, 32), 0u);  // shorter than the window: all hot
  EXPECT_EQ(text::text_tier_hot_from(32, 32), 0u);
  EXPECT_EQ(text::text_tier_hot_from(0, 32), 0u);
  EXPECT_EQ(text::text_tier_hot_slot(70, 32), 6u);
}

// The tiered oracle equals the contiguous oracle over one cache that holds
// the cold rows for old positions and the hot rows for the last hot_window.
TEST(KvTierReference, MatchesMergedContiguousCache) {
  TextAttentionParams p;
  p.batch = 2;
  p.seq_len = 5;
  p.num_heads = 4;
  p.num_kv_heads = 2;
  p.head_dim = 8;
  p.kv_capacity = 40;
  p.kv_len = {37, 6};
  p.kv_start = {2, 0};
  p.start_pos = {34, 1};
  p.causal = true;
  p.hot_window = 8;
  const uint64_t row = p.num_kv_heads * p.head_dim;
  std::mt19937 rng(7);
  std::normal_distribution<float> dist;
  auto fill = [&](uint64_t n) {
    std::vector<float> v(n);
    for (auto& x : v) x = dist(rng);
    return v;
  };
  const auto q = fill(uint64_t(p.batch) * p.seq_len * p.num_heads * p.head_dim);
  const auto k = fill(p.batch * p.kv_capacity * row), v = fill(p.batch * p.kv_capacity * row);
  const auto hot_k = fill(p.batch * p.hot_window * row), hot_v = fill(p.batch * p.hot_window * row);
  std::vector<float> merged_k = k, merged_v = v;
  for (uint32_t b = 0; b < p.batch; ++b) {
    const uint32_t len = p.kv_len_of(b), start = p.kv_start_of(b);
    for (uint32_t j = text::text_tier_hot_from(len, p.hot_window); j < len; ++j) {
      const uint32_t pos = start + j, slot = text::text_tier_hot_slot(pos, p.hot_window);
      std::copy_n(&hot_k[(b * p.hot_window + slot) * row], row, &merged_k[(b * p.kv_capacity + pos) * row]);
      std::copy_n(&hot_v[(b * p.hot_window + slot) * row], row, &merged_v[(b * p.kv_capacity + pos) * row]);
    }
  }
  TextAttentionParams tiered = p;
  tiered.layout = KvLayout::tiered;
  const auto got = reference::text_attention(tiered, q, k, v, {}, hot_k, hot_v);
  const auto want = reference::text_attention(p, q, merged_k, merged_v);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_DOUBLE_EQ(got[i], want[i]) << i;
  // The hot ring matters: the cold rows alone give another answer.
  p.layout = KvLayout::contiguous;
  EXPECT_NE(reference::text_attention(p, q, k, v), got);
}

class KvTierParity : public testing::GpuTest, public ::testing::WithParamInterface<size_t> {};

// Registered without a device (tests/parity_grid.hpp).
testing::RegisteredGrid<check::CheckCase>& tier_grid() {
  static testing::RegisteredGrid<check::CheckCase> grid(
      [](const DeviceCaps& caps) { return check::kvtier_check_cases(caps, check::GridSize::ci); },
      [](const check::CheckCase& c) { return c.name; });
  return grid;
}

TEST_P(KvTierParity, MatchesOracle) { testing::expect_matches_oracle(tier_grid(), ctx(), GetParam()); }

INSTANTIATE_TEST_SUITE_P(Grid, KvTierParity, ::testing::Range<size_t>(0, tier_grid().keys().size()),
                         [](const ::testing::TestParamInfo<size_t>& info) { return tier_grid().test_name(info.param); });

// Random f32 Q, f16 cold K/V and a hot ring of values unlike the cold tier's,
// on the host (rounded) and uploaded.
struct TieredInputs {
  check::host::Values q, k, v, hot_k, hot_v;
  TextAttentionTensors t;
};

TieredInputs tiered_inputs(Context& ctx, uint32_t seed, const Shape& qs, const Shape& kvs, const Shape& hs) {
  std::mt19937 rng(seed);
  TieredInputs in;
  in.q = check::host::to_storage(DType::f32, check::host::gaussian(rng, element_count(qs), 2.0f));
  in.k = check::host::to_storage(DType::f16, check::host::gaussian(rng, element_count(kvs), 1.0f));
  in.v = check::host::to_storage(DType::f16, check::host::gaussian(rng, element_count(kvs), 1.0f));
  in.hot_k = check::host::to_storage(DType::f16, check::host::gaussian(rng, element_count(hs), 1.5f));
  in.hot_v = check::host::to_storage(DType::f16, check::host::gaussian(rng, element_count(hs), 1.5f));
  in.t.q = check::host::upload(ctx, DType::f32, qs, in.q.bytes);
  in.t.k = check::host::upload(ctx, DType::f16, kvs, in.k.bytes);
  in.t.v = check::host::upload(ctx, DType::f16, kvs, in.v.bytes);
  in.t.hot_k = check::host::upload(ctx, DType::f16, hs, in.hot_k.bytes);
  in.t.hot_v = check::host::upload(ctx, DType::f16, hs, in.hot_v.bytes);
  return in;
}

// Lengths from a GPU buffer that the host never saw: one far past the cold
// tier is clamped to it before the tiers are split (the hot ring holds the
// last hot_window keys the kernel can see), one kv_start past every slot
// leaves no key. Every decode engine agrees with the oracle of the clamped call.
TEST(KvTierHostile, GpuLengthsPastTheCacheAreClamped) {
  Context& ctx = testing::shared_context();
  TextAttentionParams p;
  p.batch = 2;
  p.num_heads = 4;
  p.num_kv_heads = 2;
  p.head_dim = 64;
  p.layout = KvLayout::tiered;
  p.kv_capacity = 48;
  p.hot_window = 8;
  p.kv_len = {48, 30};
  p.kv_start = {0, 0};
  p.start_pos = {47, 29};
  const Shape qs{2, 1, 4, 64};
  TieredInputs in = tiered_inputs(ctx, 5, qs, {2, 48, 2, 64}, {2, 8, 2, 64});
  auto& [q, k, v, hk, hv, t] = in;
  t.kv_len = check::host::upload_u32(ctx, {0xffffffffu, 30});
  t.kv_start = check::host::upload_u32(ctx, {0, 0xfffffff0u});
  auto want = reference::text_attention(p, q.values, k.values, v.values, {}, hk.values, hv.values);
  std::fill(want.begin() + 4 * 64, want.end(), 0.0);  // sequence 1 sees no key
  for (const auto& variant : planner::text_variants()) {
    if (variant.phase != Phase::decode || variant.q != DType::f32 || variant.kv != DType::f16) continue;
    planner::TextShape shape{2, 1, 4, 2, 64, 48, DType::f32, DType::f16};
    if (!planner::text_geometry(variant, ctx.caps(), shape).geometry) continue;
    t.out = ctx.tensor(DType::f32, qs);
    run_text_attention(ctx, p, t, testing::forced(variant.name));
    const auto got = ctx.download_as<float>(t.out);
    const auto tol = reference::tolerance_for(DType::f32, DType::f16, DType::f32);
    const auto cmp = reference::compare(got, want, tol);
    EXPECT_TRUE(cmp.passed) << variant.name << ": " << reference::to_string(cmp, tol);
  }
}

// One recording replayed as a decode step appends keys: the length comes from
// a GPU buffer the host updates, and the tier boundary moves with it (the
// hot ring then holds other positions).
TEST(KvTierReplay, TierBoundaryFollowsTheGpuLength) {
  Context& ctx = testing::shared_context();
  TextAttentionParams p;
  p.num_heads = 8;
  p.num_kv_heads = 2;
  p.head_dim = 128;
  p.layout = KvLayout::tiered;
  p.kv_capacity = 64;
  p.hot_window = 16;
  p.kv_len = {64};  // the most a replay reads: the split grid is sized for it
  const Shape qs{1, 1, 8, 128};
  TieredInputs in = tiered_inputs(ctx, 9, qs, {1, 64, 2, 128}, {1, 16, 2, 128});
  auto& [q, k, v, hk, hv, t] = in;
  t.out = ctx.tensor(DType::f32, qs);
  t.kv_len = check::host::upload_u32(ctx, {20});
  Recorder rec(ctx);
  text_attention(rec, p, t);
  for (uint32_t len : {20u, 21u, 37u, 64u}) {
    ctx.upload(t.kv_len, std::vector<uint32_t>{len});
    rec.submit();
    rec.wait();
    TextAttentionParams at = p;
    at.kv_len = {len};
    const auto want = reference::text_attention(at, q.values, k.values, v.values, {}, hk.values, hv.values);
    const auto tol = reference::tolerance_for(DType::f32, DType::f16, DType::f32);
    const auto cmp = reference::compare(ctx.download_as<float>(t.out), want, tol);
    EXPECT_TRUE(cmp.passed) << "kv_len " << len << ": " << reference::to_string(cmp, tol);
  }
}

// Pools past one storage-buffer binding, on every engine: a context whose
// binding range is lowered to 256 KiB reads K/V pools of 1 MiB and more
// through their device addresses (the case fails if they were bound).
constexpr uint64_t kLoweredRange = 256 << 10;

Context& lowered_context() {
  static Context ctx([] {
    ContextOptions o;
    o.storage_buffer_range_limit = kLoweredRange;
    return o;
  }());
  return ctx;
}

// Registered without a device: each caps file's binding range lowered as lowered_context()'s is.
testing::RegisteredGrid<check::LargePoolCase>& pool_grid() {
  static testing::RegisteredGrid<check::LargePoolCase> grid(
      [](DeviceCaps caps) {
        caps.max_storage_buffer_range = std::min<uint64_t>(caps.max_storage_buffer_range, kLoweredRange);
        return check::large_pool_cases(caps, 4 * kLoweredRange, true);
      },
      [](const check::LargePoolCase& c) { return c.name; });
  return grid;
}

class KvPoolPastBinding : public testing::GpuTest, public ::testing::WithParamInterface<size_t> {};

TEST_P(KvPoolPastBinding, MatchesOracle) {
  Context& lowered = lowered_context();
  const check::LargePoolCase* c = pool_grid().device_case(lowered.caps(), GetParam());
  if (!c) GTEST_SKIP() << pool_grid().keys().at(GetParam()) << ": does not apply to " << lowered.caps().name;
  if (!lowered.caps().buffer_device_address) GTEST_SKIP() << "the device has no bufferDeviceAddress";
  auto r = check::run_large_pool_case(lowered, *c);
  EXPECT_TRUE(r.error.empty()) << r.error;
  EXPECT_TRUE(r.passed) << c->name << " variant " << r.variant << ": " << reference::to_string(r.cmp, r.tol);
}

INSTANTIATE_TEST_SUITE_P(Engines, KvPoolPastBinding, ::testing::Range<size_t>(0, pool_grid().keys().size()),
                         [](const ::testing::TestParamInfo<size_t>& info) { return pool_grid().test_name(info.param); });

class KvTierGrids : public testing::GpuTest {};

// Every case of the device's grids is registered, so none goes unrun.
TEST_F(KvTierGrids, EveryDeviceCaseIsRegistered) {
  const auto tiers = tier_grid().unregistered(ctx().caps());
  EXPECT_TRUE(tiers.empty()) << ::testing::PrintToString(tiers);
  const auto pools = pool_grid().unregistered(lowered_context().caps());
  EXPECT_TRUE(pools.empty()) << ::testing::PrintToString(pools);
}

// A paged decode whose pool passes a (fake) 4 KiB binding range.
struct PastBinding : testing::GpuTest {
  void SetUp() override {
    GpuTest::SetUp();
    p.num_heads = 2;
    p.num_kv_heads = 1;
    p.head_dim = 64;
    p.layout = KvLayout::paged;
    p.kv_capacity = 16;
    p.num_pages = 4;
    p.max_pages = 2;
    p.kv_len = {32};
    p.start_pos = {31};
    caps = ctx().caps();
    caps.max_storage_buffer_range = 4096;  // the pool is 8 KiB
    caps.buffer_device_address = true;
    t.q = ctx().tensor(DType::f32, {1, 1, 2, 64});
    t.out = ctx().tensor(DType::f32, {1, 1, 2, 64});
    pool = ctx().tensor(DType::f16, {4 * 16 * 64 + 8});
    t.k = t.v = pool.reshaped({4, 16, 1, 64});
    t.page_table = ctx().tensor(DType::u32, {1, 2});
  }
  void reject(ErrorKind kind, const std::vector<std::string>& pieces) {
    testing::expect_error([&] { text::validate_tensors(p, t, caps); }, kind, pieces);
  }
  TextAttentionParams p;
  TextAttentionTensors t;
  DeviceCaps caps;
  Tensor pool;
};

TEST_F(PastBinding, ReadByAddressWhereTheDeviceHasIt) {
  EXPECT_TRUE(text::kv_by_address(t, caps));
  EXPECT_NO_THROW(text::validate_tensors(p, t, caps));
}

TEST_F(PastBinding, UnsupportedWithoutDeviceAddresses) {
  caps.buffer_device_address = false;
  reject(ErrorKind::unsupported, {"k: expected at most 4096 bytes", "buffer device addresses", "got 8208"});
}

TEST_F(PastBinding, RowsMustBeSixteenByteAligned) {
  t.k = t.v = Tensor(pool.allocation(), pool.buffer(), pool.offset() + 8, 4 * 16 * 64 * 2, DType::f16, {4, 16, 1, 64});
  reject(ErrorKind::invalid_argument, {"k: expected a byte offset that is a multiple of 16", "got 8"});
}

// Each test breaks one thing of a tiered call that runs (Baseline).
class KvTierValidation : public testing::GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    p.batch = 2;
    p.num_heads = 4;
    p.num_kv_heads = 2;
    p.head_dim = 64;
    p.layout = KvLayout::tiered;
    p.kv_capacity = 40;
    p.kv_len = {40};
    p.start_pos = {39};
    p.hot_window = 8;
    t.q = ctx().tensor(DType::f32, {2, 1, 4, 64});
    t.out = ctx().tensor(DType::f32, {2, 1, 4, 64});
    t.k = ctx().tensor(DType::f16, {2, 40, 2, 64});
    t.v = ctx().tensor(DType::f16, {2, 40, 2, 64});
    t.hot_k = ctx().tensor(DType::f16, {2, 8, 2, 64});
    t.hot_v = ctx().tensor(DType::f16, {2, 8, 2, 64});
  }
  void expect(const std::vector<std::string>& pieces) {
    testing::expect_error(
        [&] {
          Recorder rec(ctx());
          try {
            text_attention(rec, p, t);
          } catch (...) {
            EXPECT_EQ(rec.impl().dispatch_count(), 0u) << "a rejected call recorded a dispatch";
            throw;
          }
        },
        ErrorKind::invalid_argument, pieces);
  }
  TextAttentionParams p;
  TextAttentionTensors t;
};

TEST_F(KvTierValidation, Baseline) {
  Recorder rec(ctx());
  EXPECT_NO_THROW(text_attention(rec, p, t));
}

TEST_F(KvTierValidation, HotWindowZero) {
  p.hot_window = 0;
  expect({"hot_window", "expected >= 1", "got 0"});
}

TEST_F(KvTierValidation, HotRingShapeMismatch) {
  t.hot_v = ctx().tensor(DType::f16, {2, 7, 2, 64});
  expect({"hot_v", "[2, 8, 2, 64]", "[2, 7, 2, 64]"});
}

TEST_F(KvTierValidation, HotRingMissing) {
  t.hot_k = Tensor();
  expect({"hot_k", "expected a tensor of shape [2, 8, 2, 64]", "got none"});
}

TEST_F(KvTierValidation, HotRingNotF16) {
  t.hot_k = ctx().tensor(DType::f32, {2, 8, 2, 64});
  expect({"hot_k", "expected dtype f16", "got f32"});
}

TEST_F(KvTierValidation, ColdTierF32) {
  t.k = ctx().tensor(DType::f32, {2, 40, 2, 64});
  t.v = ctx().tensor(DType::f32, {2, 40, 2, 64});
  expect({"k", "expected f16, bf16, i8 or i4 for the cold tier", "got f32"});
}

TEST_F(KvTierValidation, ColdLayoutRing) {
  p.cold_layout = KvLayout::ring;
  expect({"cold_layout", "expected contiguous or paged", "got ring"});
}

TEST_F(KvTierValidation, ContextPastColdTier) {
  p.kv_len = {41};  // every position needs a cold slot: tokens are written to both tiers
  expect({"kv_len", "kv_capacity (40)", "got 0 + 41"});
}

TEST_F(KvTierValidation, PagedColdTierNeedsPageTable) {
  p.cold_layout = KvLayout::paged;
  p.kv_capacity = 8;
  p.num_pages = 10;
  p.max_pages = 5;
  t.k = ctx().tensor(DType::f16, {10, 8, 2, 64});
  t.v = ctx().tensor(DType::f16, {10, 8, 2, 64});
  expect({"page_table", "expected a tensor of shape [2, 5]", "got none"});
}

TEST_F(KvTierValidation, HotRingOnOtherLayouts) {
  p.layout = KvLayout::contiguous;
  expect({"hot_k", "expected none for the contiguous layout", "[2, 8, 2, 64]"});
}

}  // namespace
}  // namespace vkattn

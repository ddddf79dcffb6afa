// BDPA: GPU vs float64 oracle over the kvcache grid's BDPA cases (the same
// cases `vkattn check --family kvcache` runs), the planner on the shipped caps
// files, recording from public plans, and the errors bad input gets.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "check/bdpa_cases.hpp"
#include "check/check_case.hpp"
#include "check/host_tensor.hpp"
#include "expect_error.hpp"
#include "parity_grid.hpp"
#include "planner/bdpa_planner.hpp"
#include "planner/plan_cache.hpp"
#include "test_context.hpp"
#include "test_paths.hpp"
#include "vk/recorder_impl.hpp"
#include "vkattn/bdpa.hpp"
#include "vkattn/plan.hpp"
#include "vkattn/recorder.hpp"

namespace vkattn {
namespace {

using testing::expect_error;

class BdpaParity : public testing::GpuTest, public ::testing::WithParamInterface<size_t> {};

// Registered without a device (tests/parity_grid.hpp).
testing::RegisteredGrid<check::CheckCase>& grid() {
  static testing::RegisteredGrid<check::CheckCase> g(
      [](const DeviceCaps& caps) { return check::bdpa_check_cases(caps, check::GridSize::ci); },
      [](const check::CheckCase& c) { return c.name; });
  return g;
}

TEST_P(BdpaParity, MatchesOracle) { testing::expect_matches_oracle(grid(), ctx(), GetParam()); }

INSTANTIATE_TEST_SUITE_P(Grid, BdpaParity, ::testing::Range<size_t>(0, grid().keys().size()),
                         [](const ::testing::TestParamInfo<size_t>& info) { return grid().test_name(info.param); });

class BdpaGrid : public testing::GpuTest {};

// Every case of the device's grid is registered, so none goes unrun.
TEST_F(BdpaGrid, EveryDeviceCaseIsRegistered) {
  const auto missing = grid().unregistered(ctx().caps());
  EXPECT_TRUE(missing.empty()) << ::testing::PrintToString(missing);
}

DeviceCaps caps_file(const char* name) { return load_caps_file(testing::caps_path(name)); }

TEST(BdpaPlanner, LongDecodeSplitsShortDecodeDoesNot) {
  for (const char* file : {"lavapipe.json", "nvidia-h200.json"}) {
    const DeviceCaps caps = caps_file(file);
    planner::BdpaShape shape{1, 1, 32, 8, 128, 32768, DType::f32, DType::f16};
    auto plan = planner::plan_bdpa(caps, shape);
    EXPECT_EQ(plan.variant->name, "bdpa_decode_split_f16kv") << file;
    EXPECT_EQ(plan.geometry.splits, 256u) << file;  // 128-key chunks
    shape.kv_len = 100;
    EXPECT_EQ(planner::plan_bdpa(caps, shape).variant->name, "bdpa_decode_f16kv") << file;
    shape.seq_len = 64;
    shape.q = DType::f16;
    plan = planner::plan_bdpa(caps, shape);
    EXPECT_EQ(plan.variant->name, "bdpa_prefill_tiled_f16") << file;
    EXPECT_LE(plan.geometry.shared_bytes, caps.max_shared_memory_bytes) << file;
  }
}

TEST(BdpaPlanner, OverridesAreStrictOrFallBackWithAWarning) {
  const DeviceCaps caps = caps_file("lavapipe.json");
  const planner::BdpaShape shape{1, 1, 8, 2, 64, 1000, DType::f32, DType::f16};
  PlanOptions o = testing::forced("bdpa_prefill_tiled_f16kv");
  Error e = expect_error([&] { planner::plan_bdpa(caps, shape, o); });
  EXPECT_EQ(e.kind(), ErrorKind::unsupported);
  EXPECT_NE(std::string(e.what()).find("prefill-only"), std::string::npos) << e.what();
  o.strict = false;
  auto plan = planner::plan_bdpa(caps, shape, o);
  EXPECT_EQ(plan.variant->name, "bdpa_decode_split_f16kv");
  ASSERT_EQ(plan.warnings.size(), 1u);
  o = testing::forced("bdpa_decode_f16kv");
  EXPECT_EQ(planner::plan_bdpa(caps, shape, o).geometry.splits, 1u);
  o.splits = 2;
  e = expect_error([&] { planner::plan_bdpa(caps, shape, o); });
  EXPECT_NE(std::string(e.what()).find("splits: expected 0"), std::string::npos) << e.what();
  e = expect_error([&] { planner::plan_bdpa(caps, shape, testing::forced("decode_flash_f16kv")); });
  EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
}

// A small valid call (decode, D 64, RoPE over all of it), for the error tests to break one field of.
struct SmallCall {
  BdpaParams p;
  BdpaTensors t;
  explicit SmallCall(Context& ctx) {
    p.num_heads = 4;
    p.num_kv_heads = 2;
    p.kv_capacity = 8;
    p.num_basis = 3;
    p.num_residual = 8;
    p.rotary_dim = 64;
    p.rope_positions = 8;
    p.kv_len = {8};
    p.start_pos = {7};
    t.q = ctx.tensor(DType::f32, {1, 1, 4, 64});
    t.out = ctx.tensor(DType::f32, {1, 1, 4, 64});
    t.basis_k = ctx.tensor(DType::f16, {3, 2, 64});
    t.basis_v = ctx.tensor(DType::f16, {3, 2, 64});
    t.residual_k = ctx.tensor(DType::i8, {8, 2, 64});
    t.residual_v = ctx.tensor(DType::i8, {8, 2, 64});
    t.residual_k_scale = ctx.tensor(DType::f32, {8, 2});
    t.residual_v_scale = ctx.tensor(DType::f32, {8, 2});
    t.index = ctx.tensor(DType::u32, {1, 8, 3});
    t.rope_cos = ctx.tensor(DType::f32, {8, 32});
    t.rope_sin = ctx.tensor(DType::f32, {8, 32});
  }
  std::string error(Context& ctx) {
    Recorder rec(ctx);
    return expect_error([&] { bdpa_attention(rec, p, t); }).what();
  }
};

class BdpaErrors : public testing::GpuTest {};

TEST_F(BdpaErrors, NameTheParameterExpectedAndActual) {
  auto expect = [&](auto&& edit, const std::string& want) {
    SmallCall call(ctx());
    edit(call);
    const std::string got = call.error(ctx());
    EXPECT_NE(got.find(want), std::string::npos) << "got: " << got;
  };
  expect([](SmallCall& c) { c.p.rotary_dim = 63; }, "rotary_dim: expected an even number <= head_dim (64), got 63");
  expect([](SmallCall& c) { c.p.rotary_dim = 66; }, "rotary_dim: expected an even number <= head_dim (64), got 66");
  expect([](SmallCall& c) { c.p.rope_positions = 0; }, "rope_positions: expected >= 1");
  expect([](SmallCall& c) { c.p.kv_len = {9}; }, "kv_len: expected kv_start + kv_len <= kv_capacity (8), got 0 + 9");
  expect([](SmallCall& c) { c.p.head_dim = 264; }, "head_dim: expected a multiple of 8 in [8, 256], got 264");
  expect([](SmallCall& c) { c.t.basis_v = Tensor(); }, "basis_v: expected a tensor of shape [3, 2, 64], got none");
  expect([&](SmallCall& c) { c.t.basis_v = ctx().tensor(DType::f32, {3, 2, 64}); }, "basis_v: expected dtype f16, got f32");
  expect([&](SmallCall& c) { c.t.residual_k = ctx().tensor(DType::i4, {8, 2, 64}); },
         "residual_k: expected dtype i8, got i4");
  expect([&](SmallCall& c) { c.t.index = ctx().tensor(DType::u32, {1, 8, 2}); },
         "index: expected shape [1, 8, 3], got [1, 8, 2]");
  expect([&](SmallCall& c) { c.t.rope_cos = ctx().tensor(DType::f32, {8, 16}); },
         "rope_cos: expected shape [8, 32], got [8, 16]");
  expect([&](SmallCall& c) { c.t.q = ctx().tensor(DType::f16, {1, 1, 4, 64}), c.t.basis_k = c.t.basis_v =
                                 ctx().tensor(DType::bf16, {3, 2, 64}); },
         "basis_k: expected f16 (Q is f16");
}

TEST(BdpaIndex, EntriesPastTheBasisPoolOrTablesAreErrors) {
  BdpaParams p;
  p.kv_capacity = 2;
  p.num_basis = 3;
  p.num_residual = 4;
  p.rotary_dim = 8;
  p.head_dim = 8;
  p.rope_positions = 5;
  p.kv_len = {2};
  check_bdpa_index(p, {0, 0, 0, 2, 3, 4});
  auto msg = [&](std::vector<uint32_t> index) { return std::string(expect_error([&] { check_bdpa_index(p, index); }).what()); };
  EXPECT_EQ(msg({0, 0, 0, 3, 1, 1}), "index[0][1]: expected a basis row below num_basis (3), got 3");
  EXPECT_EQ(msg({0, 4, 0, 0, 1, 1}), "index[0][0]: expected a residual row below num_residual (4), got 4");
  EXPECT_EQ(msg({0, 0, 5, 0, 1, 1}), "index[0][0]: expected a position below rope_positions (5), got 5");
  EXPECT_EQ(msg({0, 0, 0}), "index: expected batch x kv_capacity x 3 = 6 values, got 3");
  p.kv_len = {1};
  check_bdpa_index(p, {0, 0, 0, 9, 9, 9});  // entries past kv_len are never read
}

// An index naming rows past the basis, read from the GPU where the host never
// checked it: those keys are skipped (never followed), the others still count.
TEST_F(BdpaErrors, GpuIndexPastTheBasisIsNeverFollowed) {
  SmallCall call(ctx());
  // Q = 0: every visible key weighs the same. Value rows: basis row r holds r + 1
  // (f16 bits), residuals 0; RoPE is the identity (cos 1, sin 0).
  std::vector<uint16_t> basis_v(3 * 2 * 64);
  const uint16_t f16_of[] = {0x3c00, 0x4000, 0x4200};  // 1, 2, 3
  for (size_t i = 0; i < basis_v.size(); ++i) basis_v[i] = f16_of[i / 128];
  ctx().upload(call.t.basis_v, basis_v);
  ctx().upload(call.t.rope_cos, std::vector<float>(8 * 32, 1.0f));
  ctx().upload(call.t.residual_k_scale, std::vector<float>(16, 1.0f));
  ctx().upload(call.t.residual_v_scale, std::vector<float>(16, 1.0f));
  for (Tensor* x : {&call.t.q, &call.t.basis_k, &call.t.residual_k, &call.t.residual_v, &call.t.rope_sin})
    ctx().upload(*x, std::vector<std::byte>(x->bytes(), std::byte{0}));
  // Key 0: basis row 0; keys 1-3 name a basis row, a residual row and a
  // position past their ends; keys 4-7: basis row 2.
  const std::vector<uint32_t> index = {0, 0, 0, 1000, 1, 1, 1, 1000, 2, 1, 3, 1000,
                                       2, 4, 4, 2, 5, 5, 2, 6, 6, 2, 7, 7};
  ctx().upload(call.t.index, index);
  Recorder rec(ctx());
  bdpa_attention(rec, call.p, call.t);
  rec.run();
  for (float x : ctx().download_as<float>(call.t.out)) EXPECT_NEAR(x, (1.0f + 4 * 3.0f) / 5, 1e-5f);
  EXPECT_THROW(check_bdpa_index(call.p, index), Error);  // the host check names the first of them
}

// The inputs of a one-sequence call of `p` (f32) over a cache to be built on
// the GPU from Gaussian K/V whose slot j holds token id j % vocab.
struct BuiltCall {
  BdpaBuildParams bp;
  BdpaBuildTensors bt;
  BdpaTensors t;
};
BuiltCall built_call(Context& ctx, const BdpaParams& p, uint32_t vocab, uint32_t seed) {
  const uint32_t C = p.kv_capacity, Hkv = p.num_kv_heads, D = p.head_dim;
  BuiltCall c{check::build_params(p, vocab), {}, {}};
  c.bt = check::build_outputs(ctx, c.bp, DType::f32);
  std::mt19937 rng(seed);
  c.bt.k = ctx.tensor(DType::f32, {1, C, Hkv, D});
  c.bt.v = ctx.tensor(DType::f32, {1, C, Hkv, D});
  ctx.upload(c.bt.k, check::host::gaussian(rng, size_t(C) * Hkv * D, 1.0f));
  ctx.upload(c.bt.v, check::host::gaussian(rng, size_t(C) * Hkv * D, 1.0f));
  c.bt.token_ids = ctx.tensor(DType::u32, {1, C});
  std::vector<uint32_t> ids(C);
  for (uint32_t j = 0; j < C; ++j) ids[j] = j % vocab;
  ctx.upload(c.bt.token_ids, ids);
  c.t = check::attention_tensors(c.bt);
  c.t.q = ctx.tensor(DType::f32, {1, p.seq_len, p.num_heads, D});
  ctx.upload(c.t.q, check::host::gaussian(rng, size_t(p.seq_len) * p.num_heads * D, 1.0f));
  c.t.out = ctx.tensor(DType::f32, {1, p.seq_len, p.num_heads, D});
  return c;
}

// A cache built for 10 of 16 slots, attended with a longer kv_len: the
// entries past the build name no basis row and are skipped; then lengths and
// positions from GPU buffers that no host checked.
TEST_F(BdpaErrors, EntriesPastTheBuiltLengthAreSkipped) {
  BdpaParams p;
  p.num_heads = 2;
  p.head_dim = 32;
  p.kv_capacity = 16;
  p.num_basis = p.num_residual = 16;
  p.kv_len = {10};
  p.start_pos = {9};
  auto [bp, bt, t] = built_call(ctx(), p, 4, 7);
  Recorder rec(ctx());
  bdpa_build(rec, bp, bt);
  bdpa_attention(rec, p, t);
  rec.run();
  const std::vector<float> built = ctx().download_as<float>(t.out);
  p.kv_len = {16};
  rec.reset();
  bdpa_attention(rec, p, t);
  rec.run();
  EXPECT_EQ(ctx().download_as<float>(t.out), built);

  // Hostile GPU-side values: a kv_len past the index is clamped to it, a
  // start position at 2^32 - 1 is no position (its row sees no key: zeros).
  t.kv_len = ctx().tensor(DType::u32, {1});
  t.start_pos = ctx().tensor(DType::u32, {1});
  ctx().upload(t.kv_len, std::vector<uint32_t>{0xffffffffu});
  ctx().upload(t.start_pos, std::vector<uint32_t>{9});
  rec.reset();
  bdpa_attention(rec, p, t);
  rec.run();
  EXPECT_EQ(ctx().download_as<float>(t.out), built);
  ctx().upload(t.start_pos, std::vector<uint32_t>{0xffffffffu});
  rec.reset();
  bdpa_attention(rec, p, t);
  rec.run();
  EXPECT_EQ(ctx().download_as<float>(t.out), std::vector<float>(64, 0.0f));
}

TEST_F(BdpaErrors, BuilderChecksItsArguments) {
  BdpaBuildParams p;
  p.kv_capacity = 4;
  p.num_kv_heads = 1;
  p.head_dim = 8;
  p.kv_len = {4};
  BdpaBuildTensors t;
  Recorder rec(ctx());
  EXPECT_STREQ(expect_error([&] { bdpa_build(rec, p, t); }).what(), "vocab_size: expected a value in [1, 16777216], got 0");
  p.vocab_size = 10;
  p.kv_len = {5};
  EXPECT_STREQ(expect_error([&] { bdpa_build(rec, p, t); }).what(),
               "kv_len: expected <= kv_capacity (4), got 5 for sequence 0");
  p.kv_len = {4};
  t.k = ctx().tensor(DType::f16, {1, 4, 1, 8});
  t.v = ctx().tensor(DType::f32, {1, 4, 1, 8});
  EXPECT_STREQ(expect_error([&] { bdpa_build(rec, p, t); }).what(), "v: expected dtype f16, got f32");
}

// BDPA on the plan spine: a public plan (through JSON and back) records what
// the one-call path records, a forced split plan agrees with it, the one-call
// path plans a shape once, and a plan that is not the call's is an Error
// before anything is recorded.
class BdpaPlanRecord : public testing::GpuTest {};

TEST_F(BdpaPlanRecord, RecordsFromPlansAndRejectsOthers) {
  BdpaParams p;
  p.num_heads = 4;
  p.num_kv_heads = 2;
  p.head_dim = 32;
  p.kv_capacity = 300;
  p.num_basis = p.num_residual = 300;
  p.kv_len = {300};
  p.start_pos = {299};
  BuiltCall built = built_call(ctx(), p, 37, 11);
  BdpaTensors& t = built.t;  // captured by the lambdas below
  {
    Recorder rec(ctx());
    bdpa_build(rec, built.bp, built.bt);
    rec.run();
  }
  auto run = [&](auto&& record_call) {
    Recorder rec(ctx());
    record_call(rec);
    rec.run();
    return ctx().download_as<float>(t.out);
  };
  const std::vector<float> one_call = run([&](Recorder& r) { bdpa_attention(r, p, t); });
  const Plan plan = plan_bdpa(ctx().caps(), p, bdpa_tensor_types(t), {});
  EXPECT_EQ(plan.family, PlanFamily::bdpa);
  EXPECT_EQ(run([&](Recorder& r) { EXPECT_EQ(record(r, plan_from_json(to_json(plan)), p, t).variant, plan.variant); }),
            one_call);

  PlanOptions split;
  split.variant = "bdpa_decode_split_f32";
  split.strict = true;
  split.splits = 3;
  const Plan three = plan_bdpa(ctx().caps(), p, bdpa_tensor_types(t), split);
  ASSERT_EQ(three.dispatches.size(), 2u);
  const std::vector<float> by_splits = run([&](Recorder& r) { EXPECT_EQ(record(r, three, p, t).splits, 3u); });
  EXPECT_EQ(by_splits, run([&](Recorder& r) { bdpa_attention(r, p, t, split); }));
  ASSERT_EQ(by_splits.size(), one_call.size());
  for (size_t i = 0; i < one_call.size(); ++i) EXPECT_NEAR(by_splits[i], one_call[i], 1e-5f) << i;

  const uint64_t before = planner::plans_made_on_this_thread();
  for (int i = 0; i < 3; ++i) run([&](Recorder& r) { bdpa_attention(r, p, t); });
  EXPECT_EQ(planner::plans_made_on_this_thread(), before);

  Recorder rec(ctx());
  BdpaParams other = p;
  other.num_heads = 8;
  EXPECT_THAT(expect_error([&] { record(rec, plan_bdpa(ctx().caps(), other, bdpa_tensor_types(t), {}), p, t); }).what(),
              ::testing::HasSubstr("plan: expected this call's plan on"));
  Plan edited = plan;
  edited.dispatches[0].grid[0] = 2;
  EXPECT_THROW(record(rec, edited, p, t), Error);
  TextAttentionParams tp = p.contiguous_equivalent();
  const Plan text = plan_text(ctx().caps(), tp, TextTensorTypes{DType::f32, DType::f32, DType::f32, false}, {});
  EXPECT_THAT(expect_error([&] { record(rec, text, p, t); }).what(),
              ::testing::HasSubstr("plan.family: expected bdpa, got text"));
  EXPECT_EQ(rec.impl().dispatch_count(), 0u);
}

}  // namespace
}  // namespace vkattn

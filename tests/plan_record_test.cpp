// Recording from public plans on the device: a plan recorded by `record`
// matches the float64 oracle, survives a JSON round trip, and a plan that is
// not the call's is an Error before anything is recorded; the one-call path
// plans a shape once per thread and device.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <utility>

#include "ops/text/text_plan.hpp"
#include "planner/geometry_rules.hpp"
#include "planner/plan_cache.hpp"
#include "planner/split_grid.hpp"
#include "reference/text_reference.hpp"
#include "reference/tolerance.hpp"
#include "test_context.hpp"
#include "vk/recorder_impl.hpp"
#include "vk/runtime.hpp"
#include "vkattn/audio.hpp"
#include "vkattn/error.hpp"
#include "vkattn/plan.hpp"
#include "vkattn/recorder.hpp"
#include "vkattn/text.hpp"
#include "vkattn/vision.hpp"

namespace vkattn {
namespace {

using ::testing::HasSubstr;

class PlanRecord : public testing::GpuTest {
 protected:
  // A GQA decode step (4 query heads on 1 KV head, D 64) over `kv_len` keys.
  void make_decode(uint32_t kv_len) {
    p_.num_heads = 4;
    p_.num_kv_heads = 1;
    p_.head_dim = 64;
    p_.kv_capacity = kv_len;
    p_.kv_len = {kv_len};
    p_.start_pos = {kv_len - 1};
    p_.causal = true;
    std::mt19937 rng(3);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    auto values = [&](size_t n) {
      std::vector<float> v(n);
      for (auto& x : v) x = dist(rng);
      return v;
    };
    q_ = values(4 * 64);
    k_ = values(size_t(kv_len) * 64);
    v_ = values(size_t(kv_len) * 64);
    t_.q = ctx().tensor(DType::f32, {1, 1, 4, 64});
    t_.k = ctx().tensor(DType::f32, {1, kv_len, 1, 64});
    t_.v = ctx().tensor(DType::f32, {1, kv_len, 1, 64});
    t_.out = ctx().tensor(DType::f32, {1, 1, 4, 64});
    ctx().upload(t_.q, q_);
    ctx().upload(t_.k, k_);
    ctx().upload(t_.v, v_);
  }
  void expect_oracle(const std::string& what) {
    const auto tol = reference::tolerance_for(DType::f32, DType::f32, DType::f32);
    const auto cmp = reference::compare(ctx().download_as<float>(t_.out), reference::text_attention(p_, q_, k_, v_), tol);
    EXPECT_TRUE(cmp.passed) << what << ": " << reference::to_string(cmp, tol);
  }
  TextAttentionParams p_;
  TextAttentionTensors t_;
  std::vector<float> q_, k_, v_;
};

TEST_F(PlanRecord, RecordedPlanMatchesTheOracleAndSurvivesJson) {
  make_decode(700);
  const Plan plan = plan_text(ctx().caps(), p_, text_tensor_types(t_, ctx().caps()), {});
  for (const Plan& p : {plan, plan_from_json(to_json(plan))}) {
    Recorder rec(ctx());
    const TextCallInfo info = record(rec, p, p_, t_);
    EXPECT_EQ(info.variant, plan.variant);
    EXPECT_EQ(info.splits, plan.geometry.splits);
    rec.run();
    expect_oracle(plan.variant);
  }
  // Every eligible variant, named as an override, records from its plan alike.
  for (const auto& c : plan.candidates) {
    if (!c.eligible) continue;
    PlanOptions o;
    o.variant = c.variant;
    o.strict = true;
    Recorder rec(ctx());
    record(rec, plan_text(ctx().caps(), p_, text_tensor_types(t_, ctx().caps()), o), p_, t_);
    rec.run();
    expect_oracle(c.variant);
  }
}

// A plan made with a rows-per-workgroup tuning value (2 of the 4 query heads
// of the KV head per workgroup) records as made, through JSON and the plan
// check, and matches the oracle.
TEST_F(PlanRecord, APlanWithTunedRowsRecords) {
  make_decode(300);
  PlanOptions o;
  o.variant = "decode_split_f32";
  o.strict = true;
  o.rows = 2;
  const Plan plan = plan_text(ctx().caps(), p_, text_tensor_types(t_, ctx().caps()), o);
  EXPECT_EQ(plan.geometry.head_group, 2u);
  Recorder rec(ctx());
  record(rec, plan_from_json(to_json(plan)), p_, t_);
  rec.run();
  expect_oracle("decode_split_f32, 2 heads per workgroup");
}

TEST_F(PlanRecord, APlanForAnotherCallIsRejected) {
  make_decode(300);
  TextAttentionParams other = p_;
  other.num_heads = 8;  // another grid
  const Plan wrong_shape = plan_text(ctx().caps(), other, text_tensor_types(t_, ctx().caps()), {});
  Recorder rec(ctx());
  try {
    record(rec, wrong_shape, p_, t_);
    FAIL() << "a plan for 8 heads recorded a 4-head call";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
    EXPECT_THAT(e.what(), HasSubstr("plan: expected this call's plan on"));
  }
  Plan edited = plan_text(ctx().caps(), p_, text_tensor_types(t_, ctx().caps()), {});
  edited.dispatches[0].spec_constants[0] = 128;  // head_dim
  EXPECT_THROW(record(rec, edited, p_, t_), Error);
  Plan unknown = edited;
  unknown.variant = "decode_nosuch";
  try {
    record(rec, unknown, p_, t_);
    FAIL() << "an unknown variant recorded";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("plan: variant 'decode_nosuch' cannot run this call"));
  }
  const VisionAttentionParams vp{64, 2, 64, std::nullopt, VisionLayout::phd};
  try {
    record(rec, plan_vision(ctx().caps(), vp, {}, {}), p_, t_);
    FAIL() << "a vision plan recorded a text call";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("plan.family: expected text, got vision"));
  }
  EXPECT_EQ(rec.impl().dispatch_count(), 0u);
}

TEST_F(PlanRecord, TheOneCallPathPlansAShapeOnce) {
  make_decode(200);
  Recorder warm(ctx());
  text_attention(warm, p_, t_);
  const uint64_t before = planner::plans_made_on_this_thread();
  for (int i = 0; i < 3; ++i) {
    Recorder rec(ctx());
    text_attention(rec, p_, t_);
    rec.run();
    expect_oracle("cached");
  }
  EXPECT_EQ(planner::plans_made_on_this_thread(), before);
  // A new shape is planned (once).
  p_.kv_len = {150};
  p_.start_pos = {149};
  Recorder rec(ctx());
  text_attention(rec, p_, t_);
  text_attention(rec, p_, t_);
  EXPECT_EQ(planner::plans_made_on_this_thread(), before + 1);
  // Lengths from a GPU buffer: the plan is sized for the capacity (200 keys),
  // so every host hint records from one entry, the 200-key call's above.
  t_.kv_len = ctx().tensor(DType::u32, {1});
  t_.start_pos = ctx().tensor(DType::u32, {1});
  ctx().upload(t_.kv_len, std::vector<uint32_t>{200});
  ctx().upload(t_.start_pos, std::vector<uint32_t>{199});
  for (uint32_t hint : {10u, 100u, 150u}) {
    p_.kv_len = {hint};
    p_.start_pos = {hint - 1};
    text_attention(rec, p_, t_);
  }
  EXPECT_EQ(planner::plans_made_on_this_thread(), before + 1);
}

// A decode whose length is a host value growing one key per step: the plan
// cache keys it by split-length bucket, so it plans once per bucket, not per
// token; each call still gets the split count of its own length (the plan
// plan_text makes for it), and the output of a call that hit an entry planned
// at another length matches the oracle.
TEST_F(PlanRecord, AGrowingHostLengthPlansOncePerBucket) {
  make_decode(1200);
  vk::Runtime& rt = ctx().runtime();
  const TextTensorTypes types = text_tensor_types(t_, ctx().caps());
  planner::invalidate_plans();  // no entry left by an earlier test
  const uint64_t before = planner::plans_made_on_this_thread();
  std::set<std::pair<uint32_t, uint32_t>> buckets;
  std::set<uint32_t> splits;
  for (uint32_t len = 200; len <= 1200; ++len) {
    p_.kv_len = {len};
    p_.start_pos = {len - 1};
    const planner::CachedPlan& c = text::cached_plan(rt, p_, types, {});
    EXPECT_TRUE(c.plan.same_work(plan_text(ctx().caps(), p_, types, {}))) << "length " << len;
    buckets.insert({planner::split_length_bucket(len), planner::ceil_pow2(len)});
    splits.insert(c.plan.geometry.splits);
  }
  EXPECT_EQ(planner::plans_made_on_this_thread() - before, buckets.size());
  EXPECT_LE(buckets.size(), 1001u / 16 + 2);
  EXPECT_GE(splits.size(), 2u) << "the split count follows the length";
  // 1190 shares the entry 1185 planned (one bucket), and is recorded right.
  for (uint32_t len : {1185u, 1190u}) {
    p_.kv_len = {len};
    p_.start_pos = {len - 1};
    const uint64_t planned = planner::plans_made_on_this_thread();
    Recorder rec(ctx());
    text_attention(rec, p_, t_);
    rec.run();
    EXPECT_EQ(planner::plans_made_on_this_thread(), planned);
    expect_oracle("length " + std::to_string(len));
  }
}

// The plan cache keys by everything that changes a plan: the tiered layout
// (and its cold tier's), the K/V dtype, the quantization group of quantized
// K/V and reads by address; each is a new entry, planned as plan_text plans it.
TEST_F(PlanRecord, ThePlanCacheKeysByTheKvCacheChoices) {
  make_decode(256);
  vk::Runtime& rt = ctx().runtime();
  const TextTensorTypes f16kv{DType::f32, DType::f16, DType::f32, false};
  auto planned = [&](const TextAttentionParams& p, const TextTensorTypes& types) {
    const uint64_t before = planner::plans_made_on_this_thread();
    const planner::CachedPlan& c = text::cached_plan(rt, p, types, {});
    EXPECT_EQ(c.plan, plan_text(ctx().caps(), p, types, {}));
    EXPECT_EQ(&text::cached_plan(rt, p, types, {}), &c) << "a repeat is a hit";
    return planner::plans_made_on_this_thread() - before;
  };
  EXPECT_LE(planned(p_, f16kv), 1u);
  EXPECT_EQ(planned(p_, f16kv), 0u);
  TextAttentionParams tiered = p_;
  tiered.layout = KvLayout::tiered;
  tiered.hot_window = 32;
  EXPECT_EQ(planned(tiered, f16kv), 1u);
  tiered.cold_layout = KvLayout::paged;
  tiered.num_pages = 16;
  tiered.max_pages = 16;
  tiered.kv_capacity = 16;
  EXPECT_EQ(planned(tiered, f16kv), 1u);
  const TextTensorTypes i8kv{DType::f32, DType::i8, DType::f32, false};
  TextAttentionParams grouped = p_;
  EXPECT_EQ(planned(grouped, i8kv), 1u);
  grouped.kv_quant_group = 32;
  EXPECT_EQ(planned(grouped, i8kv), 1u);
  EXPECT_EQ(planned(grouped, f16kv), 0u) << "the group of an f16 cache changes nothing";
  if (ctx().caps().buffer_device_address) {
    TextTensorTypes far = f16kv;
    far.kv_by_address = true;
    EXPECT_EQ(planned(p_, far), 1u);
  }
}

// Vision and audio record from their plans exactly what the one-call path records.
TEST_F(PlanRecord, VisionAndAudioRecordFromPlans) {
  const VisionAttentionParams vp{40, 2, 64, std::nullopt, VisionLayout::phd};
  VisionAttentionTensors vt;
  vt.q = ctx().tensor(DType::f32, {40, 2, 64});
  vt.k = ctx().tensor(DType::f32, {40, 2, 64});
  vt.v = ctx().tensor(DType::f32, {40, 2, 64});
  vt.out = ctx().tensor(DType::f32, {40, 2, 64});
  std::vector<float> data(40 * 2 * 64);
  for (size_t i = 0; i < data.size(); ++i) data[i] = float((i * 7919) % 97) / 97.0f - 0.5f;
  for (const Tensor* t : {&vt.q, &vt.k, &vt.v}) ctx().upload(*t, data);

  AudioAttentionParams ap;
  ap.frames = 30;
  ap.num_heads = 2;
  ap.head_dim = 64;
  AudioAttentionTensors at;
  at.q = ctx().tensor(DType::f32, {30, 2, 64});
  at.k = ctx().tensor(DType::f32, {30, 2, 64});
  at.v = ctx().tensor(DType::f32, {30, 2, 64});
  at.per_dim_scale = ctx().tensor(DType::f32, {64});
  at.rel_pos = ctx().tensor(DType::f32, {ap.max_past + ap.max_future + 1, 2, 64});
  at.out = ctx().tensor(DType::f32, {30, 2, 64});
  for (const Tensor* t : {&at.q, &at.k, &at.v}) ctx().upload(*t, std::vector<float>(data.begin(), data.begin() + 30 * 128));
  ctx().upload(at.per_dim_scale, std::vector<float>(64, 0.5f));
  ctx().upload(at.rel_pos, std::vector<float>(data.begin(), data.begin() + at.rel_pos.elements()));

  auto run = [&](auto&& record_call, const Tensor& out) {
    Recorder rec(ctx());
    record_call(rec);
    rec.run();
    return ctx().download_as<float>(out);
  };
  const Plan vision = plan_vision(ctx().caps(), vp, vision_tensor_types(vt), {});
  EXPECT_EQ(run([&](Recorder& r) { record(r, plan_from_json(to_json(vision)), vp, vt); }, vt.out),
            run([&](Recorder& r) { vision_attention(r, vp, vt); }, vt.out));
  // The plain-GLSL build of the tensor-core engine (vision_flash_coopmat's), forced.
  PlanOptions emulated;
  emulated.variant = "vision_flash_emulated_f32";
  emulated.strict = true;
  emulated.allow_reduced_precision = true;
  const Plan fragments = plan_vision(ctx().caps(), vp, vision_tensor_types(vt), emulated);
  EXPECT_EQ(fragments.dispatches.at(0).module, "flash_coopmat_emulated");
  EXPECT_EQ(run([&](Recorder& r) { record(r, plan_from_json(to_json(fragments)), vp, vt); }, vt.out),
            run([&](Recorder& r) { vision_attention(r, vp, vt, emulated); }, vt.out));
  const Plan audio = plan_audio(ctx().caps(), ap, audio_tensor_types(at), {});
  EXPECT_EQ(run([&](Recorder& r) { record(r, plan_from_json(to_json(audio)), ap, at); }, at.out),
            run([&](Recorder& r) { audio_attention(r, ap, at); }, at.out));
}

}  // namespace
}  // namespace vkattn

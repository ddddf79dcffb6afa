// Bad input to the vision, posembed and audio ops: each throws vkattn::Error
// naming the parameter, the expected and the actual value, before any GPU work.
#include <gtest/gtest.h>

#include <functional>

#include "expect_error.hpp"
#include "test_context.hpp"
#include "vk/recorder_impl.hpp"
#include "vkattn/audio.hpp"
#include "vkattn/error.hpp"
#include "vkattn/plan.hpp"
#include "vkattn/recorder.hpp"
#include "vkattn/vision.hpp"

namespace vkattn {
namespace {

using testing::expect_error;

class VisionValidation : public testing::GpuTest {
 protected:
  VisionAttentionTensors tensors(Shape shape, DType t = DType::f32) {
    return {ctx().tensor(t, shape), ctx().tensor(t, shape), ctx().tensor(t, shape), ctx().tensor(t, shape)};
  }
  VisionAttentionParams params(uint32_t p, uint32_t h, uint32_t d) {
    VisionAttentionParams v;
    v.patches = p;
    v.num_heads = h;
    v.head_dim = d;
    return v;
  }
  void record(const VisionAttentionParams& p, const VisionAttentionTensors& t, const PlanOptions& o = {}) {
    Recorder rec(ctx());
    vision_attention(rec, p, t, o);
    EXPECT_EQ(rec.impl().dispatch_count(), 0u);  // never reached
  }
};

TEST_F(VisionValidation, HeadDimBeyondAForcedVariant) {
  PlanOptions o;
  o.variant = "vision_flash_q8_t64_f32";
  o.strict = true;
  expect_error([&] { record(params(16, 2, 256), tensors({16, 2, 256}), o); }, ErrorKind::unsupported,
               {"vision_flash_q8_t64_f32", "head_dim <= 128", "got 256"});
}

TEST_F(VisionValidation, HeadDimOutOfRange) {
  expect_error([&] { record(params(16, 2, 264), tensors({16, 2, 264})); }, ErrorKind::invalid_argument,
               {"head_dim", "[8, 256]", "got 264"});
  expect_error([&] { record(params(16, 2, 60), tensors({16, 2, 60})); }, ErrorKind::invalid_argument,
               {"head_dim", "multiple of 8", "got 60"});
}

TEST_F(VisionValidation, MismatchedShapes) {
  auto t = tensors({16, 2, 64});
  t.k = ctx().tensor(DType::f32, {15, 2, 64});
  expect_error([&] { record(params(16, 2, 64), t); }, ErrorKind::invalid_argument, {"k:", "[16, 2, 64]", "[15, 2, 64]"});
  // HPD params with PHD tensors.
  auto hpd = params(16, 2, 64);
  hpd.layout = VisionLayout::hpd;
  expect_error([&] { record(hpd, tensors({16, 2, 64})); }, ErrorKind::invalid_argument, {"q:", "[2, 16, 64]"});
}

TEST_F(VisionValidation, MixedDtypesAndMissingTensors) {
  auto t = tensors({16, 2, 64});
  t.v = ctx().tensor(DType::f16, {16, 2, 64});
  expect_error([&] { record(params(16, 2, 64), t); }, ErrorKind::invalid_argument, {"v:", "f32", "got f16"});
  t = tensors({16, 2, 64});
  t.out = Tensor();
  expect_error([&] { record(params(16, 2, 64), t); }, ErrorKind::invalid_argument, {"out:", "got none"});
  t = tensors({16, 2, 64}, DType::bf16);
  expect_error([&] { record(params(16, 2, 64), t); }, ErrorKind::invalid_argument, {"q:", "f32 or f16", "bf16"});
}

TEST_F(VisionValidation, ZeroPatchesAndBadScale) {
  expect_error([&] { record(params(0, 2, 64), tensors({1, 2, 64})); }, ErrorKind::invalid_argument,
               {"patches", ">= 1", "got 0"});
  auto p = params(16, 2, 64);
  p.scale = std::numeric_limits<float>::infinity();
  expect_error([&] { record(p, tensors({16, 2, 64})); }, ErrorKind::invalid_argument, {"scale", "finite"});
}

TEST_F(VisionValidation, PosTableTooShortForThePatchGrid) {
  PosEmbedParams p{30, 16, 4, 6};  // a 6 x 5 grid needs 6 rows per axis
  PosEmbedTensors t{ctx().tensor(DType::f32, {30, 16}), ctx().tensor(DType::f32, {2, 4, 16})};
  Recorder rec(ctx());
  expect_error([&] { pos_embed_add(rec, p, t); }, ErrorKind::invalid_argument, {"pos_size", "expected > 5", "got 4"});
  p = {30, 16, 5, 30};  // one image row of 30: x reaches 29
  expect_error([&] { pos_embed_add(rec, p, t); }, ErrorKind::invalid_argument, {"pos_size", "expected > 29", "got 5"});
  p = {30, 16, 8, 0};
  expect_error([&] { pos_embed_add(rec, p, t); }, ErrorKind::invalid_argument, {"patches_x", "got 0"});
  p = {30, 16, 8, 6};
  expect_error([&] { pos_embed_add(rec, p, t); }, ErrorKind::invalid_argument, {"table:", "[2, 8, 16]", "[2, 4, 16]"});
  PosEmbedTensors mixed{ctx().tensor(DType::f32, {30, 16}), ctx().tensor(DType::f16, {2, 8, 16})};
  expect_error([&] { pos_embed_add(rec, p, mixed); }, ErrorKind::invalid_argument, {"table:", "f32", "got f16"});
  EXPECT_EQ(rec.impl().dispatch_count(), 0u);
}

class AudioValidation : public testing::GpuTest {
 protected:
  AudioAttentionParams params() {
    AudioAttentionParams p;
    p.frames = 20;
    p.num_heads = 2;
    p.head_dim = 128;
    return p;
  }
  AudioAttentionTensors tensors(const AudioAttentionParams& p) {
    const Shape s{p.frames, p.num_heads, p.head_dim};
    AudioAttentionTensors t;
    t.q = ctx().tensor(DType::f32, s);
    t.k = ctx().tensor(DType::f32, s);
    t.v = ctx().tensor(DType::f32, s);
    t.out = ctx().tensor(DType::f32, s);
    t.per_dim_scale = ctx().tensor(DType::f32, {p.head_dim});
    t.rel_pos = ctx().tensor(DType::f32, {uint64_t(p.max_past) + p.max_future + 1, p.num_heads, p.head_dim});
    return t;
  }
  void record(const AudioAttentionParams& p, const AudioAttentionTensors& t, const PlanOptions& o = {}) {
    Recorder rec(ctx());
    audio_attention(rec, p, t, o);
  }
};

TEST_F(AudioValidation, ChunkZero) {
  auto p = params();
  auto t = tensors(p);
  p.chunk = 0;
  expect_error([&] { record(p, t); }, ErrorKind::invalid_argument, {"chunk", ">= 1", "got 0"});
}

TEST_F(AudioValidation, MismatchedShapes) {
  auto p = params();
  auto t = tensors(p);
  p.max_future = 2;  // R must grow to P + F + 1 = 15 rows
  expect_error([&] { record(p, t); }, ErrorKind::invalid_argument, {"rel_pos:", "[15, 2, 128]", "[13, 2, 128]"});
  p = params();
  t.v = ctx().tensor(DType::f32, {21, 2, 128});
  expect_error([&] { record(p, t); }, ErrorKind::invalid_argument, {"v:", "[20, 2, 128]", "[21, 2, 128]"});
  t = tensors(p);
  t.per_dim_scale = ctx().tensor(DType::f32, {64});
  expect_error([&] { record(p, t); }, ErrorKind::invalid_argument, {"per_dim_scale:", "[128]", "[64]"});
}

TEST_F(AudioValidation, DtypesHeadDimCapAndVariant) {
  auto p = params();
  auto t = tensors(p);
  t.k = ctx().tensor(DType::f16, {20, 2, 128});
  expect_error([&] { record(p, t); }, ErrorKind::invalid_argument, {"k:", "f32", "got f16"});
  t = tensors(p);
  p.head_dim = 100;
  expect_error([&] { record(p, t); }, ErrorKind::invalid_argument, {"head_dim", "multiple of 8", "got 100"});
  p = params();
  p.logit_cap = -1.0f;
  expect_error([&] { record(p, t); }, ErrorKind::invalid_argument, {"logit_cap", ">= 0", "got -1"});
  p = params();
  PlanOptions o;
  o.variant = "audio_block_local_f16";
  o.strict = true;
  expect_error([&] { record(p, t, o); }, ErrorKind::unsupported, {"audio_block_local_f16", "takes f16", "has f32"});
  o.variant = "audio_nope";
  expect_error([&] { record(p, t, o); }, ErrorKind::invalid_argument, {"variant", "audio_block_local_f32", "'audio_nope'"});
}

}  // namespace
}  // namespace vkattn

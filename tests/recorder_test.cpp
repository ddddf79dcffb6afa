// The recorder: many dependent dispatches in one command buffer, memory kept
// alive until reset, reuse after reset, timestamps, and allocation failure.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "reference/text_reference.hpp"
#include "reference/tolerance.hpp"
#include "test_context.hpp"
#include "vk/recorder_impl.hpp"
#include "vkattn/error.hpp"
#include "vkattn/recorder.hpp"
#include "vkattn/text.hpp"

namespace vkattn {
namespace {

using ::testing::HasSubstr;

std::vector<float> normal_values(uint32_t seed, size_t n) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// Decode over a 48-key contiguous cache: H4/Hkv2, D64, one sequence.
TextAttentionParams recorded_decode_params() {
  TextAttentionParams p;
  p.num_heads = 4;
  p.num_kv_heads = 2;
  p.head_dim = 64;
  p.kv_capacity = 48;
  p.kv_len = {48};
  p.start_pos = {47};
  p.causal = true;
  return p;
}

// f32 tensors for recorded_decode_params(): q, k, v and out.
TextAttentionTensors decode_tensors(Context& c) {
  TextAttentionTensors t;
  t.q = c.tensor(DType::f32, {1, 1, 4, 64});
  t.k = c.tensor(DType::f32, {1, 48, 2, 64});
  t.v = c.tensor(DType::f32, {1, 48, 2, 64});
  t.out = c.tensor(DType::f32, {1, 1, 4, 64});
  return t;
}

class Recording : public testing::GpuTest {};

// Three calls chained through their outputs in one recording: each reads what
// the previous one wrote, so only correct barriers give the oracle's chain.
TEST_F(Recording, DependentCallsInOneCommandBuffer) {
  const TextAttentionParams p = recorded_decode_params();
  const size_t nq = 4 * 64, nkv = 48 * 2 * 64;
  auto q0 = normal_values(1, nq), k = normal_values(2, nkv), v = normal_values(3, nkv);
  Context& c = ctx();
  Tensor kt = c.tensor(DType::f32, {1, 48, 2, 64}), vt = c.tensor(DType::f32, {1, 48, 2, 64});
  std::vector<Tensor> chain;
  for (int i = 0; i < 4; ++i) chain.push_back(c.tensor(DType::f32, {1, 1, 4, 64}));
  c.upload(chain[0], q0);
  c.upload(kt, k);
  c.upload(vt, v);

  Recorder rec(c);
  for (int i = 0; i < 3; ++i) {
    TextAttentionTensors t;
    t.q = chain[i];
    t.k = kt;
    t.v = vt;
    t.out = chain[i + 1];
    text_attention(rec, p, t);
  }
  rec.run();

  std::vector<float> q = q0;
  for (int i = 0; i < 3; ++i) {
    auto want = reference::text_attention(p, q, k, v);
    q.assign(want.begin(), want.end());
  }
  auto got = c.download_as<float>(chain[3]);
  auto r = reference::compare(got, std::vector<double>(q.begin(), q.end()), {1e-4});
  EXPECT_TRUE(r.passed) << reference::to_string(r, {1e-4});
}

// Workgroup counts fetched by indirect dispatches that are not their
// recording's first command: counts the host wrote before the recording
// (the recording's first barrier covered shaders only, so the indirect fetch
// gets a barrier after the caller's work of its own), and counts written
// inside it (a transfer) behind a shader's work. For the second, a barrier
// that leaves out the indirect fetch is a hazard the validation layer's
// synchronization checks (on under VKATTN_VALIDATION=1) report, failing the
// fixture; both outputs are compared with the direct call's.
TEST_F(Recording, IndirectCountsFromTheHostAndFromTheRecording) {
  const TextAttentionParams p = recorded_decode_params();
  auto q = normal_values(21, 4 * 64), k = normal_values(22, 48 * 2 * 64), v = normal_values(23, 48 * 2 * 64);
  Context& c = ctx();
  TextAttentionTensors t = decode_tensors(c);
  c.upload(t.q, q);
  c.upload(t.k, k);
  c.upload(t.v, v);
  const TextCallInfo direct = run_text_attention(c, p, t, PlanOptions{});
  const std::vector<float> want = c.download_as<float>(t.out);
  const std::vector<uint32_t> workgroups(std::begin(direct.workgroups), std::end(direct.workgroups));

  auto indirect_call = [&](const Tensor& counts) {
    TextAttentionTensors call = t;
    call.out = c.tensor(DType::f32, {1, 1, 4, 64});
    call.indirect = counts;
    return call;
  };
  const Tensor host_counts = c.tensor(DType::u32, {3}), recorded_counts = c.tensor(DType::u32, {3});
  c.upload(host_counts, workgroups);
  const TextAttentionTensors from_host = indirect_call(host_counts), from_recording = indirect_call(recorded_counts);
  Recorder rec(c);
  text_attention(rec, p, t);  // the recording's first barrier comes before this, for shaders
  text_attention(rec, p, from_host);
  rec.impl().update(vk::ref(recorded_counts, vk::Access::write), std::as_bytes(std::span(workgroups)));
  text_attention(rec, p, from_recording);
  rec.run();
  for (const TextAttentionTensors* call : {&from_host, &from_recording}) {
    auto r = reference::compare(c.download_as<float>(call->out), std::vector<double>(want.begin(), want.end()),
                                {1e-6});
    EXPECT_TRUE(r.passed) << reference::to_string(r, {1e-6});
  }
}

// Tensors dropped after recording stay valid: the recorder holds their memory.
TEST_F(Recording, HoldsTheMemoryOfWhatItRecorded) {
  const TextAttentionParams p = recorded_decode_params();
  Context& c = ctx();
  auto q = normal_values(4, 4 * 64), k = normal_values(5, 48 * 2 * 64), v = normal_values(6, 48 * 2 * 64);
  Tensor out = c.tensor(DType::f32, {1, 1, 4, 64});
  Recorder rec(c);
  {
    TextAttentionTensors t;
    t.q = c.tensor(DType::f32, {1, 1, 4, 64});
    t.k = c.tensor(DType::f32, {1, 48, 2, 64});
    t.v = c.tensor(DType::f32, {1, 48, 2, 64});
    t.out = out;
    c.upload(t.q, q);
    c.upload(t.k, k);
    c.upload(t.v, v);
    text_attention(rec, p, t);
  }  // q, k, v handles gone
  rec.run();
  auto want = reference::text_attention(p, q, k, v);
  auto r = reference::compare(c.download_as<float>(out), want, {2e-5});
  EXPECT_TRUE(r.passed) << reference::to_string(r, {2e-5});
}

// reset() discards the recording; the recorder records anew and times it.
TEST_F(Recording, ResetRecordsAnewWithTimestamps) {
  const TextAttentionParams p = recorded_decode_params();
  Context& c = ctx();
  TextAttentionTensors t = decode_tensors(c);
  c.upload(t.q, normal_values(7, 4 * 64));
  c.upload(t.k, normal_values(8, 48 * 2 * 64));
  c.upload(t.v, normal_values(9, 48 * 2 * 64));
  Recorder rec(c);
  text_attention(rec, p, t);
  rec.run();
  EXPECT_GE(rec.impl().dispatch_count(), 1u);
  rec.reset();
  EXPECT_EQ(rec.impl().dispatch_count(), 0u);
  uint32_t a = rec.timestamp();
  text_attention(rec, p, t);
  uint32_t b = rec.timestamp();
  rec.run();
  EXPECT_GE(rec.elapsed_ms(a, b), 0.0);
  // Recording after submit without reset is refused with a clear error.
  try {
    text_attention(rec, p, t);
    FAIL() << "recording into a submitted command buffer was accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("call reset() first"));
  }
}

// Allocation failure surfaces as an Error, never as a crash.
TEST_F(Recording, HugeAllocationIsAnError) {
  try {
    ctx().tensor(DType::f32, {1ull << 40});
    FAIL() << "a 4 TiB tensor was allocated";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::out_of_memory) << e.what();
  }
}

}  // namespace
}  // namespace vkattn

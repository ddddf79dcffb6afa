// Thread safety as context.hpp documents it, and the log callback: separate
// contexts on separate threads (one per GPU, as a runtime that splits heads
// across GPUs uses them), and one context shared by threads that each own a
// recorder. Every result is checked against the float64 oracle.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "check/stderr_log.hpp"
#include "expect_error.hpp"
#include "reference/text_reference.hpp"
#include "reference/tolerance.hpp"
#include "test_context.hpp"
#include "vkattn/log.hpp"
#include "vkattn/plan.hpp"
#include "vkattn/recorder.hpp"
#include "vkattn/text.hpp"

namespace vkattn {
namespace {

// One f32 attention call of a shape that differs by `seed`, recorded with its
// own recorder and compared with the oracle; returns the comparison's text
// when it fails, empty when it passes. Runs on any thread.
std::string attention_on(Context& ctx, uint32_t seed) {
  TextAttentionParams p;
  p.batch = 1 + seed % 2;
  p.seq_len = seed % 3 == 0 ? 4 : 1;
  p.num_heads = 4;
  p.num_kv_heads = 2;
  p.head_dim = 32;
  p.kv_capacity = 40 + 8 * seed;
  p.kv_len = {p.kv_capacity};
  p.start_pos = {p.kv_capacity - p.seq_len};
  p.causal = true;
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  auto random = [&](size_t n) {
    std::vector<float> v(n);
    for (auto& x : v) x = dist(rng);
    return v;
  };
  const Shape qs{p.batch, p.seq_len, p.num_heads, p.head_dim}, ks{p.batch, p.kv_capacity, p.num_kv_heads, p.head_dim};
  const auto q = random(element_count(qs)), k = random(element_count(ks)), v = random(element_count(ks));
  TextAttentionTensors t;
  t.q = ctx.tensor(DType::f32, qs);
  t.k = ctx.tensor(DType::f32, ks);
  t.v = ctx.tensor(DType::f32, ks);
  t.out = ctx.tensor(DType::f32, qs);
  ctx.upload(t.q, q);
  ctx.upload(t.k, k);
  ctx.upload(t.v, v);
  Recorder rec(ctx);
  text_attention(rec, p, t);
  rec.run();
  const auto tol = reference::tolerance_for(DType::f32, DType::f32, DType::f32);
  const auto r = reference::compare(ctx.download_as<float>(t.out), reference::text_attention(p, q, k, v), tol);
  return r.passed && r.max_ref > 0.05 ? "" : reference::to_string(r, tol);
}

// Runs `body(i)` on `n` threads and returns what each returned.
template <class F>
std::vector<std::string> on_threads(uint32_t n, F body) {
  std::vector<std::string> results(n);
  std::vector<std::thread> threads;
  for (uint32_t i = 0; i < n; ++i)
    threads.emplace_back([&, i] {
      try {
        results[i] = body(i);
      } catch (const std::exception& e) {
        results[i] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  return results;
}

class Threads : public testing::GpuTest {};

TEST_F(Threads, SeparateContextsOnSeparateThreads) {
  const auto results = on_threads(2, [](uint32_t i) {
    Context ctx;  // the suite's device ($VKATTN_DEVICE) and validation ($VKATTN_VALIDATION)
    std::string out;
    for (uint32_t call = 0; call < 3; ++call) out += attention_on(ctx, 10 * i + call);
    return out;
  });
  for (const auto& r : results) EXPECT_EQ(r, "");
}

TEST_F(Threads, OneContextSharedByThreadsEachWithItsOwnRecorder) {
  Context& shared = ctx();
  const auto results = on_threads(4, [&](uint32_t i) {
    std::string out;
    for (uint32_t call = 0; call < 3; ++call) out += attention_on(shared, 20 + 4 * call + i);
    return out;
  });
  for (const auto& r : results) EXPECT_EQ(r, "");
}

// Messages go to the installed callback, not to stderr.
TEST(LogCallback, ReceivesWarnings) {
  std::mutex m;
  std::vector<std::pair<LogLevel, std::string>> got;
  set_log_callback([&](LogLevel level, std::string_view message) {
    std::lock_guard lock(m);
    got.emplace_back(level, std::string(message));
  });
  TextAttentionParams p;
  p.num_heads = 2;
  p.num_kv_heads = 1;
  p.head_dim = 16;
  p.kv_capacity = 8;
  p.kv_len = {8};
  TextAttentionTensors t;
  Context& ctx = testing::shared_context();
  t.q = ctx.tensor(DType::f32, {1, 1, 2, 16});
  t.k = ctx.tensor(DType::f32, {1, 8, 1, 16});
  t.v = ctx.tensor(DType::f32, {1, 8, 1, 16});
  t.out = ctx.tensor(DType::f32, {1, 1, 2, 16});
  PlanOptions o;
  o.variant = "no_such_variant_for_the_log_test";  // not strict: one warning, then the planner's choice
  Recorder rec(ctx);
  text_attention(rec, p, t, o);
  check::install_stderr_log();  // what the other tests use
  bool warned = false;
  for (const auto& [level, message] : got)
    warned |= level == LogLevel::warning && message.find("no_such_variant_for_the_log_test") != std::string::npos;
  EXPECT_TRUE(warned) << "expected a warning naming the rejected variant";
}

}  // namespace
}  // namespace vkattn

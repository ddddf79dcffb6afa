// Host cost of recording one decode call (Llama-3-8B shape: 32 query heads on
// 8 KV heads, head dim 128, 4096 keys, f16 KV), with the plan cached and
// without, and with a host length that grows every call, on the default device
// ($VKATTN_DEVICE). A runtime that records a
// layer's attention per graph pays the cached figure once per layer.
#include <benchmark/benchmark.h>

#include <algorithm>

#include "planner/plan_cache.hpp"
#include "vkattn/context.hpp"
#include "vkattn/plan.hpp"
#include "vkattn/recorder.hpp"
#include "vkattn/text.hpp"

namespace {

using namespace vkattn;

// Recordings kept before the recorder is reset, so descriptor pools stay warm
// and the loop measures recording, not pool growth.
constexpr int kCallsPerReset = 256;

struct DecodeCall {
  Context ctx;
  TextAttentionParams p;
  TextAttentionTensors t;
  DecodeCall() {
    p.num_heads = 32;
    p.num_kv_heads = 8;
    p.head_dim = 128;
    p.kv_capacity = 4096;
    p.kv_len = {4096};
    p.start_pos = {4095};
    p.causal = true;
    t.q = ctx.tensor(DType::f32, {1, 1, 32, 128});
    t.k = ctx.tensor(DType::f16, {1, 4096, 8, 128});
    t.v = ctx.tensor(DType::f16, {1, 4096, 8, 128});
    t.out = ctx.tensor(DType::f32, {1, 1, 32, 128});
    t.kv_len = ctx.tensor(DType::u32, {1});  // lengths on the GPU, as a replayed graph has them
  }
};

DecodeCall& call() {
  static DecodeCall c;
  return c;
}

void record_loop(benchmark::State& state, bool cached) {
  DecodeCall& c = call();
  Recorder rec(c.ctx);
  int since_reset = 0;
  for (auto _ : state) {
    if (!cached) planner::invalidate_plans();
    text_attention(rec, c.p, c.t);
    if (++since_reset == kCallsPerReset) {
      state.PauseTiming();
      rec.reset();
      since_reset = 0;
      state.ResumeTiming();
    }
  }
}

// A decode step whose length is a host value growing by one key per call (no
// length buffer), 1024 to 4096 keys and around again: the plan cache keys it by
// split-length bucket, so it re-plans once per bucket, not per token.
void BM_RecordDecodeGrowingHostLength(benchmark::State& state) {
  DecodeCall& c = call();
  TextAttentionParams p = c.p;
  TextAttentionTensors t = c.t;
  t.kv_len = Tensor{};
  Recorder rec(c.ctx);
  uint32_t len = 1024;
  int since_reset = 0;
  planner::invalidate_plans();  // from a cold cache, as a fresh process decodes
  const uint64_t planned_before = planner::plans_made_on_this_thread();
  for (auto _ : state) {
    p.kv_len[0] = len;
    p.start_pos[0] = len - 1;
    text_attention(rec, p, t);
    len = len == 4096 ? 1024 : len + 1;
    if (++since_reset == kCallsPerReset) {
      state.PauseTiming();
      rec.reset();
      since_reset = 0;
      state.ResumeTiming();
    }
  }
  state.counters["plans_per_1k_calls"] = 1000.0 * double(planner::plans_made_on_this_thread() - planned_before) /
                                         double(std::max<int64_t>(1, state.iterations()));
}

void BM_RecordDecodeCachedPlan(benchmark::State& state) { record_loop(state, true); }
void BM_RecordDecodeUncachedPlan(benchmark::State& state) { record_loop(state, false); }

// Planning alone (no device work): what every uncached call adds.
void BM_PlanDecode(benchmark::State& state) {
  DecodeCall& c = call();
  const TextTensorTypes types = text_tensor_types(c.t, c.ctx.caps());
  for (auto _ : state) benchmark::DoNotOptimize(plan_text(c.ctx.caps(), c.p, types, {}));
}

BENCHMARK(BM_RecordDecodeCachedPlan);
BENCHMARK(BM_RecordDecodeUncachedPlan);
BENCHMARK(BM_RecordDecodeGrowingHostLength);
BENCHMARK(BM_PlanDecode);

}  // namespace

BENCHMARK_MAIN();

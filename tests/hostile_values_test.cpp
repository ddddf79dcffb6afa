// Hostile values on every text engine: windows and positions near 2^31 and
// 2^32, lengths, positions and page tables read from GPU buffers that the host
// never checked, and NaN/Inf in the caller's Q/K. Every buffer sits between
// guard regions filled with NaN, so a stray read poisons the output and a
// stray write changes a guard; outputs are compared with the float64 oracle.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "planner/text_planner.hpp"
#include "planner/text_variants.hpp"
#include "reference/text_reference.hpp"
#include "reference/tolerance.hpp"
#include "test_context.hpp"
#include "vkattn/plan.hpp"
#include "vkattn/recorder.hpp"
#include "vkattn/text.hpp"

namespace vkattn {
namespace {

constexpr uint32_t kNanBits = 0x7fc00000u;  // also a page id far past any pool
constexpr size_t kGuardWords = 4096;        // 16 KiB each side

// One problem: params as the host validates them, the data, and what the GPU
// buffers will hold instead (the hostile part).
struct Problem {
  TextAttentionParams p;
  std::vector<float> q, k, v;
  std::vector<uint32_t> table;                          // paged
  std::vector<uint32_t> gpu_kv_len, gpu_start_pos, gpu_kv_start;  // non-empty: bound as GPU buffers
};

// A buffer of guard | data | guard; the tensor views the data.
struct Guarded {
  Tensor whole, view;
  size_t words = 0;
};

Guarded guarded(Context& c, DType t, Shape shape, const std::vector<uint32_t>& words) {
  Guarded g;
  g.words = words.size();
  std::vector<uint32_t> all(words.size() + 2 * kGuardWords, kNanBits);
  std::copy(words.begin(), words.end(), all.begin() + kGuardWords);
  g.whole = c.tensor(DType::u32, {all.size()});
  c.upload(g.whole, all);
  g.view = c.wrap(g.whole.buffer(), kGuardWords * 4, words.size() * 4, t, std::move(shape));
  return g;
}

std::vector<uint32_t> bits(const std::vector<float>& v) {
  std::vector<uint32_t> w(v.size());
  std::memcpy(w.data(), v.data(), v.size() * 4);
  return w;
}

Problem make_problem(const planner::TextVariant& v, KvLayout layout, uint32_t seed) {
  Problem pr;
  auto& p = pr.p;
  const bool decode = v.phase == Phase::decode;
  p.batch = 2;
  p.seq_len = decode ? 1 : 5;
  p.num_heads = 4;
  p.num_kv_heads = 2;
  p.head_dim = std::max(64u, v.min_head_dim);
  p.layout = layout;
  p.kv_len = {40};
  p.start_pos = {40 - p.seq_len};
  p.causal = !decode;
  if (layout == KvLayout::paged) {
    p.kv_capacity = 16;
    p.max_pages = 3;
    p.num_pages = 7;
    pr.table = {4, 0, 6, 2, 5, 1};
  } else {
    p.kv_capacity = 40;
  }
  std::mt19937 rng(seed);
  std::normal_distribution<float> n(0.0f, 1.0f);
  const size_t kv_rows = layout == KvLayout::paged ? size_t(p.num_pages) * p.kv_capacity : size_t(p.batch) * p.kv_capacity;
  auto fill = [&](std::vector<float>& x, size_t count) {
    x.resize(count);
    for (auto& e : x) e = n(rng);
  };
  fill(pr.q, size_t(p.batch) * p.seq_len * p.num_heads * p.head_dim);
  fill(pr.k, kv_rows * p.num_kv_heads * p.head_dim);
  fill(pr.v, kv_rows * p.num_kv_heads * p.head_dim);
  return pr;
}

// Runs `variant` (forced) and returns the output; fails the test on a changed guard.
std::vector<float> run_guarded(Context& c, const Problem& pr, const std::string& variant) {
  const auto& p = pr.p;
  const bool paged = p.layout == KvLayout::paged;
  const Shape qs{p.batch, p.seq_len, p.num_heads, p.head_dim};
  const Shape kvs = paged ? Shape{p.num_pages, p.kv_capacity, p.num_kv_heads, p.head_dim}
                          : Shape{p.batch, p.kv_capacity, p.num_kv_heads, p.head_dim};
  std::vector<Guarded> keep;
  auto add = [&](DType t, Shape s, const std::vector<uint32_t>& w) -> Tensor {
    keep.push_back(guarded(c, t, std::move(s), w));
    return keep.back().view;
  };
  TextAttentionTensors t;
  t.q = add(DType::f32, qs, bits(pr.q));
  t.k = add(DType::f32, kvs, bits(pr.k));
  t.v = add(DType::f32, kvs, bits(pr.v));
  const std::vector<uint32_t> zeros(pr.q.size(), 0u);
  t.out = add(DType::f32, qs, zeros);
  const size_t out_index = keep.size() - 1;
  if (paged) t.page_table = add(DType::u32, {p.batch, p.max_pages}, pr.table);
  if (!pr.gpu_kv_len.empty()) t.kv_len = add(DType::u32, {p.batch}, pr.gpu_kv_len);
  if (!pr.gpu_start_pos.empty()) t.start_pos = add(DType::u32, {p.batch}, pr.gpu_start_pos);
  if (!pr.gpu_kv_start.empty()) t.kv_start = add(DType::u32, {p.batch}, pr.gpu_kv_start);
  run_text_attention(c, p, t, testing::forced(variant));
  auto all = c.download_as<uint32_t>(keep[out_index].whole);
  for (size_t i = 0; i < kGuardWords; ++i) {
    EXPECT_EQ(all[i], kNanBits) << variant << ": wrote before the output at word " << i;
    EXPECT_EQ(all[kGuardWords + pr.q.size() + i], kNanBits) << variant << ": wrote past the output";
    if (all[i] != kNanBits || all[kGuardWords + pr.q.size() + i] != kNanBits) break;
  }
  std::vector<float> out(pr.q.size());
  std::memcpy(out.data(), all.data() + kGuardWords, out.size() * 4);
  return out;
}

void expect_matches(const std::vector<float>& got, const std::vector<double>& want, const std::string& what) {
  const reference::Tolerance tol{2e-5};
  auto r = reference::compare(got, want, tol);
  EXPECT_TRUE(r.passed) << what << ": " << reference::to_string(r, tol);
}

std::vector<const planner::TextVariant*> runnable_f32_variants(const DeviceCaps& caps) {
  std::vector<const planner::TextVariant*> out;
  for (const auto& v : planner::text_variants()) {
    if (v.q != DType::f32 || v.kv != DType::f32) continue;
    planner::TextShape s{2, v.phase == Phase::decode ? 1u : 5u, 4, 2, std::max(64u, v.min_head_dim), 40, v.q, v.kv};
    if (planner::text_geometry(v, caps, s).geometry) out.push_back(&v);
  }
  return out;
}

class HostileValues : public testing::GpuTest {};

// Windows past 2^31 (where signed arithmetic turned negative) and near 2^32
// (where qpos >= kpos + window wrapped) hide nothing here: every key is within them.
TEST_F(HostileValues, HugeWindowsMatchTheOracle) {
  for (const auto* v : runnable_f32_variants(ctx().caps()))
    for (uint32_t window : {0x80000001u, 0xfffffff0u, 0xffffffffu}) {
      Problem pr = make_problem(*v, KvLayout::contiguous, window);
      pr.p.window = window;
      expect_matches(run_guarded(ctx(), pr, v->name), reference::text_attention(pr.p, pr.q, pr.k, pr.v),
                     v->name + " window " + std::to_string(window));
    }
}

// Per-sequence values from GPU buffers: the host never saw them.
TEST_F(HostileValues, GpuLengthsAndPositionsPastTheCacheAreClamped) {
  const uint32_t top = std::numeric_limits<uint32_t>::max();
  for (const auto* v : runnable_f32_variants(ctx().caps()))
    for (KvLayout layout : {KvLayout::contiguous, KvLayout::ring, KvLayout::paged}) {
      const std::string name = v->name + " " + std::string(to_string(layout));
      const Problem base = make_problem(*v, layout, 7);
      const uint32_t slots = layout == KvLayout::paged ? base.p.max_pages * base.p.kv_capacity : base.p.kv_capacity;
      {
        // kv_len past capacity: keys stop where the cache ends (a ring holds capacity keys).
        Problem pr = base;
        pr.p.causal = false;
        pr.gpu_kv_len = {top, slots + 1000};
        TextAttentionParams want = pr.p;
        want.kv_len = {slots};
        expect_matches(run_guarded(ctx(), pr, v->name), reference::text_attention(want, pr.q, pr.k, pr.v, pr.table),
                       name + " kv_len past capacity");
      }
      {
        // start_pos near 2^32: causal queries see every key; rows at 2^32 - 1 and
        // beyond are no valid position (zeros), the rows before them still count.
        Problem pr = base;
        pr.gpu_start_pos = {top - 1 - pr.p.seq_len, top - 3};
        TextAttentionParams want = pr.p;
        want.start_pos = pr.gpu_start_pos;
        auto expect = reference::text_attention(want, pr.q, pr.k, pr.v, pr.table);
        const size_t row = size_t(pr.p.num_heads) * pr.p.head_dim;
        for (uint32_t i = 3; i < pr.p.seq_len; ++i)  // sequence 1: 2^32 - 4 + i >= 2^32 - 1
          std::fill_n(expect.begin() + (pr.p.seq_len + i) * row, row, 0.0);
        expect_matches(run_guarded(ctx(), pr, v->name), expect, name + " start_pos near 2^32");
      }
      {
        // The same with a window: positions that far from every key see none of them.
        Problem pr = base;
        pr.p.window = 16;
        pr.gpu_start_pos = {top - 1 - pr.p.seq_len, 0x80000000u};
        for (float x : run_guarded(ctx(), pr, v->name)) ASSERT_EQ(x, 0.0f) << name << " windowed start_pos near 2^32";
      }
      if (layout != KvLayout::ring) {
        // kv_start past the end of the cache (and near 2^32): no key.
        Problem pr = base;
        pr.p.causal = false;
        pr.gpu_kv_start = {slots + 3, top - 2};
        for (float x : run_guarded(ctx(), pr, v->name)) ASSERT_EQ(x, 0.0f) << name << " kv_start past the end";
      }
      if (layout == KvLayout::paged) {
        // Page ids past the pool: the keys behind them are masked, the others count.
        Problem pr = base;
        pr.table[0] = 7;                           // sequence 0, positions 0..15
        pr.table[3] = 0xfffffff0u;                 // sequence 1, positions 0..15
        TextAttentionParams want = pr.p;
        want.kv_start = {16};
        want.kv_len = {24};
        Problem ok = pr;
        ok.table[0] = 0;  // never read by the oracle (kv_start skips it)
        ok.table[3] = 0;
        expect_matches(run_guarded(ctx(), pr, v->name), reference::text_attention(want, pr.q, pr.k, pr.v, ok.table),
                       name + " page ids past the pool");
      }
    }
}

// NaN or Inf in Q or K reaches the rows that read it as NaN; other rows are untouched.
TEST_F(HostileValues, NanAndInfInQAndKPropagate) {
  for (const auto* v : runnable_f32_variants(ctx().caps())) {
    Problem pr = make_problem(*v, KvLayout::contiguous, 11);
    pr.q[3] = std::numeric_limits<float>::quiet_NaN();  // sequence 0, row 0, head 0
    const size_t seq1_key5 = ((size_t(1) * pr.p.kv_capacity + 5) * pr.p.num_kv_heads + 1) * pr.p.head_dim;
    pr.k[seq1_key5] = std::numeric_limits<float>::infinity();  // sequence 1, key 5, kv head 1
    auto want = reference::text_attention(pr.p, pr.q, pr.k, pr.v);
    size_t nans = 0;
    for (double x : want) nans += std::isnan(x);
    ASSERT_GT(nans, 0u);
    expect_matches(run_guarded(ctx(), pr, v->name), want, v->name + " NaN/Inf inputs");
  }
}

}  // namespace
}  // namespace vkattn

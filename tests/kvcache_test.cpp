// kv_append and quantized KV on the GPU: the kvcache parity grid, bad input,
// GPU-side positions the cache cannot hold, and a long append + decode run.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "check/kvcache_cases.hpp"
#include "expect_error.hpp"
#include "parity_grid.hpp"
#include "planner/text_planner.hpp"
#include "shaders/text_kv_tier.h"
#include "test_paths.hpp"
#include "vkattn/caps.hpp"
#include "reference/kv_quant_reference.hpp"
#include "reference/rounding.hpp"
#include "reference/text_reference.hpp"
#include "reference/tolerance.hpp"
#include "test_context.hpp"
#include "vkattn/kvcache.hpp"
#include "vkattn/recorder.hpp"

namespace vkattn {
namespace {

using testing::expect_error;

class KvCacheGrid : public testing::GpuTest, public ::testing::WithParamInterface<size_t> {};

// Registered without a device (tests/parity_grid.hpp), each case by its description.
testing::RegisteredGrid<check::KvCacheCase>& cache_grid() {
  static testing::RegisteredGrid<check::KvCacheCase> grid(
      [](const DeviceCaps& caps) { return check::kvcache_grid(caps, check::GridSize::ci); },
      [](const check::KvCacheCase& c) { return check::describe(c); });
  return grid;
}

TEST_P(KvCacheGrid, AppendExactAndAttentionWithinBothChecks) {
  const check::KvCacheCase* c = cache_grid().device_case(ctx().caps(), GetParam());
  if (!c) GTEST_SKIP() << cache_grid().keys().at(GetParam()) << ": does not apply to " << ctx().caps().name;
  const check::KvCacheResult r = check::run_kvcache_case(ctx(), *c);
  EXPECT_TRUE(r.append_error.empty()) << r.append_error;
  EXPECT_TRUE(r.exact.cmp.passed) << reference::to_string(r.exact.cmp, r.exact.tol) << " (" << r.exact.variant << ")";
  EXPECT_LE(r.e2e_err, r.e2e_bound) << "end to end against the unquantized data (" << r.exact.variant << ")";
}

INSTANTIATE_TEST_SUITE_P(Grid, KvCacheGrid, ::testing::Range<size_t>(0, cache_grid().keys().size()),
                         [](const auto& info) { return "case" + std::to_string(info.index); });

class KvCacheCases : public testing::GpuTest {};

// Every case of the device's grid is registered, so none goes unrun.
TEST_F(KvCacheCases, EveryDeviceCaseIsRegistered) {
  const auto missing = cache_grid().unregistered(ctx().caps());
  EXPECT_TRUE(missing.empty()) << ::testing::PrintToString(missing);
}

// On the H200 prefill over a quantized cache runs on the tensor-core flash
// rows, as over f16 (f32 Q only where reduced precision is allowed, as for f16
// K/V); decode keeps decode_flash and says why.
TEST(KvQuantPlanner, QuantizedPrefillRunsOnTensorCoresDecodeOnDecodeFlash) {
  const DeviceCaps h200 = load_caps_file(testing::caps_path("nvidia-h200.json"));
  planner::TextShape s;
  s.seq_len = 512;
  s.num_heads = 32;
  s.num_kv_heads = 8;
  s.head_dim = 128;
  s.kv_len = 512;
  s.q = DType::f16;
  s.kv = DType::f16;
  EXPECT_EQ(planner::plan_text(h200, s, {}).variant->family, "prefill_flash_coopmat");
  for (DType kv : {DType::i8, DType::i4}) {
    const std::string suffix = "_" + std::string(to_string(kv)) + "kv";
    s.seq_len = 512;
    s.kv = kv;
    s.q = DType::f16;
    EXPECT_EQ(planner::plan_text(h200, s, {}).variant->name, "prefill_flash_coopmat_f16" + suffix);
    s.q = DType::f32;
    EXPECT_EQ(planner::plan_text(h200, s, {}).variant->engine, planner::Engine::shared_tiles);
    PlanOptions reduced;
    reduced.allow_reduced_precision = true;
    EXPECT_EQ(planner::plan_text(h200, s, reduced).variant->name, "prefill_flash_coopmat" + suffix);
    s.q = DType::f16;
    s.seq_len = 1;
    const planner::TextPlan d = planner::plan_text(h200, s, {});
    EXPECT_EQ(d.variant->name, "decode_flash_f16" + suffix);
    EXPECT_NE(d.reason.find("the tensor-core decode takes f16/bf16 K/V only"), std::string::npos) << d.reason;
    EXPECT_EQ(planner::find_text_variant("decode_flash_coopmat_f16" + suffix), nullptr);
    EXPECT_EQ(planner::find_text_variant("decode_stream_coopmat_f16" + suffix), nullptr);
    // Past head dim 128 the quantized prefill leaves the tensor cores (their
    // D256 rows gave non-finite output on an H100); the emulated row does not.
    planner::TextShape wide = s;
    wide.seq_len = 512;
    wide.head_dim = 256;
    EXPECT_EQ(planner::plan_text(h200, wide, {}).variant->name, "prefill_tiled_small_f16" + suffix);
    const planner::TextVariant* coopmat = planner::find_text_variant("prefill_flash_coopmat_f16" + suffix);
    ASSERT_NE(coopmat, nullptr);
    EXPECT_EQ(planner::text_geometry(*coopmat, h200, wide).reason, "needs head_dim <= 128, got 256");
    const planner::TextVariant* emulated = planner::find_text_variant("prefill_flash_emulated_f16" + suffix);
    ASSERT_NE(emulated, nullptr);
    EXPECT_EQ(emulated->max_head_dim, 256u);
  }
}

// A small int8 cache and its append call, for the error tests.
struct Fixture {
  KvAppendParams p;
  KvAppendTensors t;
  Fixture(Context& ctx, KvLayout layout, DType cache = DType::i8) {
    p.num_kv_heads = 1;
    p.head_dim = 16;
    p.layout = layout;
    p.kv_capacity = 8;
    const bool paged = layout == KvLayout::paged;
    if (paged) {
      p.num_pages = 4;
      p.max_pages = 2;
    }
    const Shape shape = paged ? Shape{4, 8, 1, 16} : Shape{1, 8, 1, 16};
    t.k = ctx.tensor(DType::f32, {1, 1, 1, 16});
    t.v = ctx.tensor(DType::f32, {1, 1, 1, 16});
    t.cache_k = ctx.tensor(cache, shape);
    t.cache_v = ctx.tensor(cache, shape);
    t.k_scale = ctx.tensor(DType::f16, {shape[0], 8, 1});
    t.v_scale = ctx.tensor(DType::f16, {shape[0], 8, 1});
  }
};

class KvAppendErrors : public testing::GpuTest {};

TEST_F(KvAppendErrors, PackedStrideNotMatchingHeadDim) {
  Fixture f(ctx(), KvLayout::contiguous);
  f.t.cache_k = ctx().tensor(DType::i8, {1, 8, 1, 8});  // packed for D = 8: 2 words, D = 16 needs 4
  Recorder rec(ctx());
  const Error e = expect_error([&] { kv_append(rec, f.p, f.t); });
  EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
  EXPECT_NE(std::string(e.what()).find("cache_k: expected packed_stride ceil(head_dim / 4) = 4"), std::string::npos)
      << e.what();
  // The same for the attention call reading the cache.
  TextAttentionParams p;
  p.head_dim = 16;
  p.kv_capacity = 8;
  p.kv_len = {8};
  TextAttentionTensors t{ctx().tensor(DType::f32, {1, 1, 1, 16}), f.t.cache_k, f.t.cache_k};
  t.k = ctx().tensor(DType::i4, {1, 8, 1, 24});
  t.v = t.k;
  t.out = t.q;
  const Error e2 = expect_error([&] { text_attention(rec, p, t); });
  EXPECT_NE(std::string(e2.what()).find("k: expected packed_stride ceil(head_dim / 8) = 2"), std::string::npos)
      << e2.what();
}

TEST_F(KvAppendErrors, PositionsPastCapacity) {
  Fixture f(ctx(), KvLayout::contiguous);
  f.p.positions = {8};
  Recorder rec(ctx());
  const Error e = expect_error([&] { kv_append(rec, f.p, f.t); });
  EXPECT_NE(std::string(e.what()).find("positions: expected position + tokens <= kv_capacity (8), got 8 + 1"),
            std::string::npos)
      << e.what();
  Fixture paged(ctx(), KvLayout::paged);
  paged.t.page_table = ctx().tensor(DType::u32, {1, 2});
  paged.p.positions = {15};
  paged.p.tokens = 1;
  kv_append(rec, paged.p, paged.t);  // the last slot: fine
  paged.p.positions = {16};
  EXPECT_NE(std::string(expect_error([&] { kv_append(rec, paged.p, paged.t); }).what())
                .find("expected position + tokens <= max_pages * page_size (16)"),
            std::string::npos);
  Fixture ring(ctx(), KvLayout::ring);
  ring.p.tokens = 9;
  ring.t.k = ctx().tensor(DType::f32, {1, 9, 1, 16});
  ring.t.v = ring.t.k;
  EXPECT_NE(std::string(expect_error([&] { kv_append(rec, ring.p, ring.t); }).what())
                .find("tokens: expected at most kv_capacity (8, the ring's slots)"),
            std::string::npos);
}

// Appends into two caches (two layers, say) recorded back to back without a
// barrier, then run: neither call binds anything the other writes, so the
// validation layer (on in the tests) has nothing to report, and both land.
TEST_F(KvAppendErrors, TwoUnrelatedAppendsNeedNoBarrier) {
  Fixture a(ctx(), KvLayout::contiguous, DType::f16), b(ctx(), KvLayout::contiguous, DType::f16);
  const std::vector<float> row(16, 0.5f);
  for (Fixture* f : {&a, &b}) {
    f->p.positions = {3};
    ctx().upload(f->t.k, row);
    ctx().upload(f->t.v, row);
  }
  Recorder rec(ctx());
  kv_append(rec, a.p, a.t);
  kv_append(rec, b.p, b.t);
  rec.run();
  for (Fixture* f : {&a, &b}) {
    const std::vector<uint16_t> k = ctx().download_as<uint16_t>(f->t.cache_k);
    for (size_t e = 0; e < 16; ++e) EXPECT_EQ(k[3 * 16 + e], 0x3800u) << e;  // 0.5 in f16, in slot 3
  }
}

TEST_F(KvAppendErrors, FreedPageIsAnError) {
  Fixture f(ctx(), KvLayout::paged);
  PageAllocator pages(ctx(), 4, 8, 1, 2);
  pages.reserve(0, 16);
  EXPECT_EQ(pages.free_pages(), 2u);
  const std::vector<uint32_t> held = pages.host_table();
  f.t.page_table = pages.table();
  f.p.pages = &pages;
  f.p.positions = {9};
  Recorder rec(ctx());
  kv_append(rec, f.p, f.t);
  pages.release(0);
  EXPECT_EQ(pages.free_pages(), 4u);
  const Error e = expect_error([&] { kv_append(rec, f.p, f.t); });
  EXPECT_NE(std::string(e.what()).find("page_table[0][1]: expected a page allocated to sequence 0"), std::string::npos)
      << e.what();
  // A table the caller kept from before the release still names the freed pages.
  const Error e2 = expect_error([&] { pages.check_table(held); });
  EXPECT_NE(std::string(e2.what()).find("page_table[0][0]: expected none"), std::string::npos) << e2.what();
  EXPECT_NE(std::string(e2.what()).find("(a freed page)"), std::string::npos) << e2.what();
  // The pool is exhausted past its pages.
  EXPECT_EQ(expect_error([&] { pages.reserve(0, 17); }).kind(), ErrorKind::invalid_argument);
}

TEST_F(KvAppendErrors, QuantGroupAndScales) {
  Fixture f(ctx(), KvLayout::contiguous);
  f.p.quant_group = 16;
  Recorder rec(ctx());
  EXPECT_NE(std::string(expect_error([&] { kv_append(rec, f.p, f.t); }).what()).find("quant_group: expected 0"),
            std::string::npos);
  f.p.quant_group = 0;
  f.t.v_scale = Tensor();
  EXPECT_NE(std::string(expect_error([&] { kv_append(rec, f.p, f.t); }).what()).find("v_scale: expected a tensor"),
            std::string::npos);
}

// A tiered write checks its hot ring and its cold tier like the other layouts.
TEST_F(KvAppendErrors, TieredCacheChecks) {
  auto tiered = [&](KvLayout cold) {
    Fixture f(ctx(), cold);
    f.p.layout = KvLayout::tiered;
    f.p.cold_layout = cold;
    f.p.hot_window = 4;
    f.t.hot_k = ctx().tensor(DType::f16, {1, 4, 1, 16});
    f.t.hot_v = ctx().tensor(DType::f16, {1, 4, 1, 16});
    if (cold == KvLayout::paged) f.t.page_table = ctx().tensor(DType::u32, {1, 2});
    return f;
  };
  Recorder rec(ctx());
  auto message = [&](const Fixture& f) { return std::string(expect_error([&] { kv_append(rec, f.p, f.t); }).what()); };
  Fixture f = tiered(KvLayout::contiguous);
  f.p.positions = {7};
  kv_append(rec, f.p, f.t);  // the last cold slot: fine
  f.p.positions = {8};
  EXPECT_NE(message(f).find("positions: expected position + tokens <= kv_capacity (8), got 8 + 1"), std::string::npos)
      << message(f);
  f = tiered(KvLayout::contiguous);
  f.p.hot_window = 0;
  EXPECT_NE(message(f).find("hot_window: expected >= 1 (hot ring slots of the tiered layout), got 0"),
            std::string::npos)
      << message(f);
  f = tiered(KvLayout::contiguous);
  f.p.cold_layout = KvLayout::ring;
  EXPECT_NE(message(f).find("cold_layout: expected contiguous or paged for the tiered layout, got ring"),
            std::string::npos)
      << message(f);
  f = tiered(KvLayout::contiguous);
  f.t.hot_v = ctx().tensor(DType::f16, {1, 3, 1, 16});
  EXPECT_NE(message(f).find("hot_v:"), std::string::npos) << message(f);
  EXPECT_NE(message(f).find("[1, 4, 1, 16]"), std::string::npos) << message(f);
  f = tiered(KvLayout::contiguous);
  f.t.hot_k = ctx().tensor(DType::f32, {1, 4, 1, 16});
  EXPECT_NE(message(f).find("hot_k: expected dtype f16 (the hot ring), got f32"), std::string::npos) << message(f);
  f = tiered(KvLayout::contiguous);
  f.t.hot_k = Tensor();
  EXPECT_NE(message(f).find("hot_k: expected a tensor"), std::string::npos) << message(f);
  f = tiered(KvLayout::contiguous);
  f.t.cache_k = f.t.cache_v = ctx().tensor(DType::f32, {1, 8, 1, 16});
  EXPECT_NE(message(f).find("cache_k: expected f16, bf16, i8 or i4 for the cold tier"), std::string::npos)
      << message(f);
  Fixture plain(ctx(), KvLayout::contiguous);
  plain.t.hot_k = f.t.hot_v;
  EXPECT_NE(message(plain).find("hot_k: expected none for the contiguous layout"), std::string::npos) << message(plain);

  // A paged cold tier: past max_pages * page_size, and a freed page.
  Fixture paged = tiered(KvLayout::paged);
  paged.p.positions = {16};
  EXPECT_NE(message(paged).find("expected position + tokens <= max_pages * page_size (16)"), std::string::npos)
      << message(paged);
  PageAllocator pages(ctx(), 4, 8, 1, 2);
  pages.reserve(0, 16);
  paged.t.page_table = pages.table();
  paged.p.pages = &pages;
  paged.p.positions = {9};
  kv_append(rec, paged.p, paged.t);
  pages.release(0);
  EXPECT_NE(message(paged).find("page_table[0][1]: expected a page allocated to sequence 0"), std::string::npos)
      << message(paged);
}

// Positions from a GPU buffer that the cache cannot hold are skipped: nothing
// is written, in particular not past the cache.
TEST_F(KvAppendErrors, GpuPositionsPastTheCacheWriteNothing) {
  for (KvLayout layout : {KvLayout::contiguous, KvLayout::paged}) {
    Fixture f(ctx(), layout, DType::f32);
    const uint32_t words = uint32_t(f.t.cache_k.bytes() / 4);
    // The caches sit in one buffer with a guard after each; all start as ones.
    Tensor all = ctx().tensor(DType::u32, {uint64_t(words) * 4});
    ctx().upload(all, std::vector<uint32_t>(words * 4, 0x3f800000u));
    auto view = [&](uint32_t at) {
      return Tensor(all.allocation(), all.buffer(), all.offset() + at * 4ull, words * 4ull, DType::f32,
                    f.t.cache_k.shape());
    };
    f.t.cache_k = view(0);
    f.t.cache_v = view(2 * words);
    ctx().upload(f.t.k, std::vector<float>(16, 5.0f));
    ctx().upload(f.t.v, std::vector<float>(16, 5.0f));
    if (layout == KvLayout::paged) {
      f.t.page_table = ctx().tensor(DType::u32, {1, 2});
      ctx().upload(f.t.page_table, std::vector<uint32_t>{0xffffffffu, 7u});  // freed, outside the pool
    }
    for (uint32_t pos : {0u, 9u, 16u, 0xfffffffeu, 0xffffffffu}) {
      if (layout == KvLayout::contiguous && pos == 0) continue;  // slot 0 is real
      f.t.positions = ctx().tensor(DType::u32, {1});
      ctx().upload(f.t.positions, std::vector<uint32_t>{pos});
      Recorder rec(ctx());
      kv_append(rec, f.p, f.t);
      rec.run();
    }
    std::vector<uint32_t> got(words * 4);
    ctx().download(all, std::as_writable_bytes(std::span(got)));
    for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], 0x3f800000u) << to_string(layout) << " word " << i;
  }
}

// 10,000 decode steps on a tiered int8 cache (an f16 hot ring of 16 slots, a
// paged int8 cold tier holding every position): each step appends one token
// to both tiers and attends over the last 64 positions (48 cold, 16 hot), as
// one command buffer recorded once and replayed with the position, lengths and
// data from GPU buffers; every step within the quantization bound.
TEST_F(KvAppendErrors, TenThousandAppendDecodeStepsOnATieredInt8Cache) {
  constexpr uint32_t kSteps = 10000, kHot = 16, kSpan = 64, kPage = 64, kD = 16, kH = 2;
  constexpr uint32_t kPages = (kSteps + kPage - 1) / kPage;
  // One buffer of per-step inputs, each piece at a 256-byte boundary: one upload per step.
  enum : uint32_t { kK = 0, kV = 64, kQ = 128, kPos = 192, kLen = 256, kStart = 320, kQPos = 384, kWords = 448 };
  Tensor io = ctx().tensor(DType::u32, {kWords});
  auto piece = [&](uint32_t at, DType dt, Shape shape) {
    return Tensor(io.allocation(), io.buffer(), io.offset() + at * 4ull, dtype_storage_bytes(dt, element_count(shape)),
                  dt, shape);
  };
  PageAllocator pages(ctx(), kPages, kPage, 1, kPages);
  pages.reserve(0, kSteps);
  KvAppendParams ap;
  ap.head_dim = kD;
  ap.layout = KvLayout::tiered;
  ap.cold_layout = KvLayout::paged;
  ap.hot_window = kHot;
  ap.kv_capacity = kPage;
  ap.num_pages = ap.max_pages = kPages;
  KvAppendTensors at;
  at.k = piece(kK, DType::f32, {1, 1, 1, kD});
  at.v = piece(kV, DType::f32, {1, 1, 1, kD});
  at.positions = piece(kPos, DType::u32, {1});
  at.cache_k = ctx().tensor(DType::i8, {kPages, kPage, 1, kD});
  at.cache_v = ctx().tensor(DType::i8, {kPages, kPage, 1, kD});
  at.k_scale = ctx().tensor(DType::f16, {kPages, kPage, 1});
  at.v_scale = ctx().tensor(DType::f16, {kPages, kPage, 1});
  at.hot_k = ctx().tensor(DType::f16, {1, kHot, 1, kD});
  at.hot_v = ctx().tensor(DType::f16, {1, kHot, 1, kD});
  at.page_table = pages.table();
  TextAttentionParams p;
  p.num_heads = kH;
  p.head_dim = kD;
  p.causal = true;
  p.layout = KvLayout::tiered;
  p.cold_layout = KvLayout::paged;
  p.hot_window = kHot;
  p.kv_capacity = kPage;
  p.num_pages = p.max_pages = kPages;
  p.kv_len = {kSpan};
  TextAttentionTensors t;
  t.q = piece(kQ, DType::f32, {1, 1, kH, kD});
  t.k = at.cache_k;
  t.v = at.cache_v;
  t.k_scale = at.k_scale;
  t.v_scale = at.v_scale;
  t.hot_k = at.hot_k;
  t.hot_v = at.hot_v;
  t.page_table = at.page_table;
  t.out = ctx().tensor(DType::f32, {1, 1, kH, kD});
  t.kv_len = piece(kLen, DType::u32, {1});
  t.kv_start = piece(kStart, DType::u32, {1});
  t.start_pos = piece(kQPos, DType::u32, {1});
  Recorder rec(ctx());
  kv_append(rec, ap, at);
  PlanOptions one_split;  // lengths from the GPU size splits for the whole cold tier; 64 keys need one
  one_split.splits = 1;
  const TextCallInfo info = text_attention(rec, p, t, one_split);
  ASSERT_EQ(info.splits, 1u) << info.variant;

  // The oracle sees the visible positions shifted down by a multiple of the
  // hot window (hot slots unchanged; masks depend on differences only) in a
  // small contiguous cold tier, and the raw data in both tiers: the bound
  // covers the int8 cold keys and the f16 rounding of the hot ones.
  constexpr uint32_t kCold = kSpan + kHot;  // slots of the oracle's cold tier
  std::mt19937 rng(3);
  std::normal_distribution<float> dist;
  std::vector<float> all_k(kSteps * kD), all_v(kSteps * kD);
  std::vector<double> err_k(kSteps), err_v(kSteps);  // int8 error of each position's row
  std::vector<float> hot_k(kHot * kD), hot_v(kHot * kD);
  std::vector<uint32_t> words(kWords, 0);
  std::vector<float> out(kH * kD);
  const reference::Tolerance tol = reference::tolerance_for(DType::f32, DType::f32, DType::f32);
  double worst = 0.0;  // largest error / allowed over all steps
  for (uint32_t step = 0; step < kSteps; ++step) {
    const uint32_t len = std::min(step + 1, kSpan), first = step + 1 - len;
    std::vector<float> q(kH * kD);
    float* k = &all_k[step * kD];
    float* v = &all_v[step * kD];
    const float mag = std::exp(float(step % 17) / 4 - 2);  // rows of different scales
    for (uint32_t i = 0; i < kD; ++i) k[i] = dist(rng) * mag;
    for (uint32_t i = 0; i < kD; ++i) v[i] = dist(rng) * mag;
    for (auto& x : q) x = dist(rng);
    std::memcpy(&words[kK], k, kD * 4);
    std::memcpy(&words[kV], v, kD * 4);
    std::memcpy(&words[kQ], q.data(), kH * kD * 4);
    words[kPos] = step;
    words[kLen] = len;
    words[kStart] = first;
    words[kQPos] = step;
    ctx().upload(io, words);
    rec.submit();
    ctx().download(t.out, std::as_writable_bytes(std::span(out)));

    auto int8_error = [&](const float* row) {
      const std::span<const float> x(row, kD);
      return reference::quant_row_error(DType::i8, 0, kD, x, reference::quantize_rows(DType::i8, 0, kD, x).scales)[0];
    };
    err_k[step] = int8_error(k);
    err_v[step] = int8_error(v);
    const uint32_t slot = text::text_tier_hot_slot(step, kHot);
    std::copy_n(k, kD, hot_k.begin() + slot * kD);
    std::copy_n(v, kD, hot_v.begin() + slot * kD);
    const uint32_t shift = first / kHot * kHot;
    std::vector<float> cold_k(kCold * kD, 0.0f), cold_v(kCold * kD, 0.0f);
    std::vector<double> ek, ev;
    for (uint32_t pos = first; pos <= step; ++pos) {
      std::copy_n(&all_k[pos * kD], kD, cold_k.begin() + (pos - shift) * kD);
      std::copy_n(&all_v[pos * kD], kD, cold_v.begin() + (pos - shift) * kD);
      ek.push_back(err_k[pos]);
      ev.push_back(err_v[pos]);
    }
    for (float x : hot_k) ek.push_back(std::fabs(double(x) - reference::round_to(DType::f16, x)));
    for (float x : hot_v) ev.push_back(std::fabs(double(x) - reference::round_to(DType::f16, x)));
    TextAttentionParams sp = p;
    sp.cold_layout = KvLayout::contiguous;
    sp.kv_capacity = kCold;
    sp.kv_len = {len};
    sp.kv_start = {first - shift};
    sp.start_pos = {step - shift};
    const std::vector<double> want = reference::text_attention(sp, q, cold_k, cold_v, {}, hot_k, hot_v);
    const std::vector<double> bound = reference::quant_attention_bound(sp, q, cold_v, ek, ev);
    double max_want = 0.0;
    for (double w : want) max_want = std::max(max_want, std::fabs(w));
    for (size_t i = 0; i < want.size(); ++i) {
      const double allowed = bound[i] + tol.abs_rel * max_want;
      const double err = std::fabs(out[i] - want[i]);
      ASSERT_LE(err, allowed) << "step " << step << " element " << i << " (" << info.variant << ")";
      worst = std::max(worst, err / allowed);
    }
  }
  RecordProperty("worst_error_over_bound", std::to_string(worst));
}

}  // namespace
}  // namespace vkattn

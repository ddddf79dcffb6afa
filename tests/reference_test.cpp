// Tests of the float64 oracles, the tolerance policy and host rounding. The
// oracles judge every GPU test, so each is pinned by hand-computed values and
// by invariants against its simplest configuration.

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "reference/audio_reference.hpp"
#include "reference/rounding.hpp"
#include "reference/text_reference.hpp"
#include "reference/tolerance.hpp"
#include "reference/vision_reference.hpp"
#include "vkattn/error.hpp"

namespace vkattn::reference {
namespace {

std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> x(n);
  for (float& f : x) f = dist(rng);
  return x;
}

// Runs `f`, expecting an Error of `kind` whose message starts with "param:".
void expect_param_error(const std::function<void()>& f, const std::string& param,
                  ErrorKind kind = ErrorKind::invalid_argument) {
  try {
    f();
    ADD_FAILURE() << "expected an Error naming " << param;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind(param + ":", 0), 0u) << "message: " << e.what();
    EXPECT_NE(std::string(e.what()).find("expected"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("got"), std::string::npos) << e.what();
  }
}

TextAttentionParams text_params(uint32_t batch, uint32_t seq_len, uint32_t heads, uint32_t kv_heads,
                                uint32_t head_dim, uint32_t capacity) {
  TextAttentionParams p;
  p.batch = batch;
  p.seq_len = seq_len;
  p.num_heads = heads;
  p.num_kv_heads = kv_heads;
  p.head_dim = head_dim;
  p.kv_capacity = capacity;
  return p;
}

// ---------------------------------------------------------------- text ----

TEST(TextReference, HandComputedTwoKeys) {
  // scale 1, q = (1, 0); k0 = (0, 0), k1 = (ln 3, 0): scores 0 and ln 3, so
  // softmax = (1/4, 3/4). v0 = (4, 0), v1 = (0, 8): out = (1, 6).
  auto p = text_params(1, 1, 1, 1, 2, 2);
  p.scale = 1.0f;
  p.kv_len = {2};
  const float ln3 = std::log(3.0f);
  std::vector<float> q = {1, 0}, k = {0, 0, ln3, 0}, v = {4, 0, 0, 8};
  const double w1 = std::exp(double{ln3}) / (1 + std::exp(double{ln3}));  // 3/4 up to rounding of ln 3
  auto out = text_attention(p, q, k, v);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_NEAR(out[0], 4 * (1 - w1), 1e-12);
  EXPECT_NEAR(out[1], 8 * w1, 1e-12);
  EXPECT_NEAR(out[0], 1.0, 1e-6);
  EXPECT_NEAR(out[1], 6.0, 1e-6);
}

TEST(TextReference, DefaultScaleIsInverseSqrtHeadDim) {
  // D = 4, q = k1 = (1, 1, 1, 1): score = 4 / sqrt(4) = 2; k0 = 0 scores 0.
  // v0 = 0, v1 = 1 everywhere: out = e^2 / (1 + e^2).
  auto p = text_params(1, 1, 1, 1, 4, 2);
  p.kv_len = {2};
  std::vector<float> q(4, 1.0f), k = {0, 0, 0, 0, 1, 1, 1, 1}, v = {0, 0, 0, 0, 1, 1, 1, 1};
  auto out = text_attention(p, q, k, v);
  const double e2 = std::exp(2.0);
  for (double o : out) EXPECT_NEAR(o, e2 / (1 + e2), 1e-12);
}

TEST(TextReference, UniformValueRowsGiveThatRow) {
  auto p = text_params(1, 3, 2, 1, 5, 7);
  p.kv_len = {7};
  p.start_pos = {4};
  p.causal = true;
  auto q = random_floats(3 * 2 * 5, 1, -3, 3), k = random_floats(7 * 5, 2, -3, 3);
  const std::vector<float> row = {0.5f, -1.0f, 2.0f, 0.25f, 3.0f};
  std::vector<float> v;
  for (int t = 0; t < 7; ++t) v.insert(v.end(), row.begin(), row.end());
  auto out = text_attention(p, q, k, v);
  for (size_t i = 0; i < out.size(); ++i) EXPECT_NEAR(out[i], row[i % 5], 1e-12) << i;
}

TEST(TextReference, GqaMapsConsecutiveQueryHeadsToOneKvHead) {
  // H = 4, Hkv = 2: heads 0, 1 read kv head 0 (v = 1), heads 2, 3 read kv head 1 (v = 2).
  auto p = text_params(1, 1, 4, 2, 3, 3);
  p.kv_len = {3};
  auto q = random_floats(4 * 3, 3), k = random_floats(3 * 2 * 3, 4);
  std::vector<float> v;
  for (int t = 0; t < 3; ++t)
    for (float value : {1.0f, 2.0f}) v.insert(v.end(), 3, value);
  auto out = text_attention(p, q, k, v);
  for (int h = 0; h < 4; ++h)
    for (int d = 0; d < 3; ++d) EXPECT_NEAR(out[h * 3 + d], h < 2 ? 1.0 : 2.0, 1e-12) << h;
}

TEST(TextReference, CausalPrefillRowsMatchDecodeOverTheirPrefix) {
  const uint32_t S = 4, H = 2, D = 3;
  auto p = text_params(1, S, H, H, D, S);
  p.kv_len = {S};
  p.causal = true;
  auto q = random_floats(S * H * D, 5, -2, 2), k = random_floats(S * H * D, 6, -2, 2), v = random_floats(S * H * D, 7);
  auto prefill = text_attention(p, q, k, v);
  for (uint32_t i = 0; i < S; ++i) {
    auto d = text_params(1, 1, H, H, D, S);
    d.kv_len = {i + 1};
    d.start_pos = {i};
    auto row = text_attention(d, std::span(q).subspan(i * H * D, H * D), k, v);
    for (uint32_t j = 0; j < H * D; ++j) EXPECT_DOUBLE_EQ(prefill[i * H * D + j], row[j]) << i;
  }
  // Row 0 sees only key 0.
  for (uint32_t j = 0; j < H * D; ++j) EXPECT_NEAR(prefill[j], v[j], 1e-12);
}

TEST(TextReference, WindowHidesKeysAtOrBeforeQueryPosMinusWindow) {
  auto p = text_params(1, 1, 1, 1, 2, 6);
  p.kv_len = {6};
  auto q = random_floats(2, 8, -2, 2), k = random_floats(12, 9, -2, 2), v = random_floats(12, 10);

  // Causal, query at 5, window 2: keys 4 and 5 only.
  p.start_pos = {5};
  p.causal = true;
  p.window = 2;
  auto narrow = p;
  narrow.window = 0;
  narrow.kv_start = {4};
  narrow.kv_len = {2};
  EXPECT_EQ(text_attention(p, q, k, v), text_attention(narrow, q, k, v));

  // Not causal, query at 2, window 2: hides key 0 (0 <= 2 - 2), keeps 1..5.
  p.start_pos = {2};
  p.causal = false;
  narrow.kv_start = {1};
  narrow.kv_len = {5};
  EXPECT_EQ(text_attention(p, q, k, v), text_attention(narrow, q, k, v));
}

TEST(TextReference, WindowLargerThanQueryPosDoesNotUnderflow) {
  // Query at 0 with window 4: key 0 is visible (0 < 0 + 4), so out = v0.
  auto p = text_params(1, 1, 1, 1, 2, 1);
  p.kv_len = {1};
  p.causal = true;
  p.window = 4;
  std::vector<float> q = {1, 2}, k = {3, 4}, v = {5, 6};
  auto out = text_attention(p, q, k, v);
  EXPECT_DOUBLE_EQ(out[0], 5);
  EXPECT_DOUBLE_EQ(out[1], 6);
}

TEST(TextReference, QueriesSeeingNoKeyOutputZeros) {
  // Sequence 0: causal queries at 0 and 1, keys at 3 and 4: all hidden.
  // Sequence 1: kv_len 0. Sequence 2: a normal row, to show it is not zero.
  auto p = text_params(3, 2, 1, 1, 2, 5);
  p.causal = true;
  p.kv_start = {3, 0, 0};
  p.kv_len = {2, 0, 2};
  p.start_pos = {0, 0, 1};
  auto q = random_floats(3 * 2 * 2, 11), k = random_floats(3 * 5 * 2, 12), v = random_floats(3 * 5 * 2, 13, 1, 2);
  auto out = text_attention(p, q, k, v);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(out[i], 0.0) << i;
  for (int i = 8; i < 12; ++i) EXPECT_GT(out[i], 0.9) << i;
}

TEST(TextReference, SoftcapBoundsScores) {
  // scale 1, D = 1, q = 1, keys 0 and 100. Without a cap key 1 takes all the
  // weight; with softcap 1 its score is tanh(100) ~ 1: weight e / (1 + e).
  auto p = text_params(1, 1, 1, 1, 1, 2);
  p.scale = 1.0f;
  p.kv_len = {2};
  std::vector<float> q = {1}, k = {0, 100}, v = {0, 1};
  EXPECT_NEAR(text_attention(p, q, k, v)[0], 1.0, 1e-12);
  p.softcap = 1.0f;
  const double s = std::tanh(100.0);
  EXPECT_NEAR(text_attention(p, q, k, v)[0], std::exp(s) / (1 + std::exp(s)), 1e-12);
  EXPECT_NEAR(text_attention(p, q, k, v)[0], std::numbers::e / (1 + std::numbers::e), 1e-12);
  // softcap 50 changes a score of 3 to 50 tanh(3 / 50).
  p.softcap = 50.0f;
  k = {0, 3};
  const double s3 = 50 * std::tanh(3.0 / 50);
  EXPECT_NEAR(text_attention(p, q, k, v)[0], std::exp(s3) / (1 + std::exp(s3)), 1e-12);
}

// A causal, GQA, two-sequence case with per-sequence positions, laid out
// contiguously; the ring and paged tests store the same keys elsewhere.
struct KvCase {
  TextAttentionParams p = text_params(2, 2, 4, 2, 3, 9);
  std::vector<float> q, k, v;
  KvCase() {
    p.causal = true;
    p.kv_start = {1, 3};
    p.kv_len = {7, 5};  // positions 1..7 and 3..7
    p.start_pos = {6, 6};
    q = random_floats(2 * 2 * 4 * 3, 20, -2, 2);
    k = random_floats(2 * 9 * 2 * 3, 21, -2, 2);
    v = random_floats(2 * 9 * 2 * 3, 22);
  }
  // Copies position pos of sequence b from the contiguous cache to `row` of dst.
  void copy_row(uint32_t b, uint32_t pos, std::vector<float>& kd, std::vector<float>& vd, uint64_t row) const {
    const uint64_t n = 2 * 3, src = (uint64_t{b} * 9 + pos) * n;
    std::copy_n(k.begin() + src, n, kd.begin() + row * n);
    std::copy_n(v.begin() + src, n, vd.begin() + row * n);
  }
};

TEST(TextReference, RingMatchesContiguous) {
  KvCase c;
  auto ring = c.p;
  ring.layout = KvLayout::ring;
  ring.kv_capacity = 7;  // positions wrap: 7 -> slot 0
  std::vector<float> k(2 * 7 * 6, NAN), v(2 * 7 * 6, NAN);
  for (uint32_t b = 0; b < 2; ++b)
    for (uint32_t j = 0; j < c.p.kv_len[b]; ++j) {
      const uint32_t pos = c.p.kv_start[b] + j;
      c.copy_row(b, pos, k, v, b * 7 + pos % 7);
    }
  EXPECT_EQ(text_attention(ring, c.q, k, v), text_attention(c.p, c.q, c.k, c.v));
}

TEST(TextReference, PagedMatchesContiguousWithScrambledPageTable) {
  KvCase c;
  auto paged = c.p;
  paged.layout = KvLayout::paged;
  paged.kv_capacity = 2;  // page size
  paged.num_pages = 9;
  paged.max_pages = 5;
  // Positions 1..7 use pages 0..3 of each row; entry 4 is never read, so it may hold anything.
  const std::vector<uint32_t> table = {7, 2, 8, 0, 12345,  //
                                       5, 4, 3, 1, 99};
  std::vector<float> k(9 * 2 * 6, NAN), v(9 * 2 * 6, NAN);
  for (uint32_t b = 0; b < 2; ++b)
    for (uint32_t j = 0; j < c.p.kv_len[b]; ++j) {
      const uint32_t pos = c.p.kv_start[b] + j;
      c.copy_row(b, pos, k, v, uint64_t{table[b * 5 + pos / 2]} * 2 + pos % 2);
    }
  EXPECT_EQ(text_attention(paged, c.q, k, v, table), text_attention(c.p, c.q, c.k, c.v));
}

TEST(TextReference, ValidationNamesTheParameter) {
  KvCase c;
  auto run = [&](const TextAttentionParams& p, std::vector<uint32_t> table = {}) {
    return [=] { text_attention(p, c.q, c.k, c.v, table); };
  };
  expect_param_error([&] { text_attention(c.p, std::span(c.q).first(5), c.k, c.v); }, "q");
  expect_param_error([&] { text_attention(c.p, c.q, std::span(c.k).first(5), c.v); }, "k");
  expect_param_error([&] { text_attention(c.p, c.q, c.k, std::span(c.v).first(5)); }, "v");
  auto p = c.p;
  p.num_kv_heads = 3;
  expect_param_error(run(p), "num_kv_heads");
  p = c.p;
  p.head_dim = 0;
  expect_param_error(run(p), "head_dim");
  p = c.p;
  p.kv_len = {1, 2, 3};
  expect_param_error(run(p), "kv_len");
  p = c.p;
  p.start_pos = {};
  expect_param_error(run(p), "start_pos");
  p = c.p;
  p.kv_len = {9, 5};  // kv_start 1 + 9 > 9 slots
  expect_param_error(run(p), "kv_capacity");
  p = c.p;
  p.softcap = -1.0f;
  expect_param_error(run(p), "softcap");
  p = c.p;
  p.scale = NAN;
  expect_param_error(run(p), "scale");
  expect_param_error(run(c.p, {0}), "page_table");

  p = c.p;
  p.layout = KvLayout::ring;
  p.kv_capacity = 9;
  p.kv_len = {7, 10};  // more keys than ring slots
  p.kv_start = {1, 0};
  expect_param_error(run(p), "kv_capacity");

  // Paged: pool [6, 3, 2, 3] holds the 2 * 9 * 6 floats of the contiguous case.
  p = c.p;
  p.layout = KvLayout::paged;
  p.kv_capacity = 3;
  p.num_pages = 6;
  p.max_pages = 3;
  std::vector<uint32_t> table = {0, 1, 2, 3, 4, 5};
  EXPECT_NO_THROW(run(p, table)());
  expect_param_error(run(p, {0, 1, 2}), "page_table");
  table[4] = 6;  // position 3..5 of sequence 1 -> page 6 of 6
  expect_param_error(run(p, table), "page_table");
  table[4] = 4;
  p.max_pages = 2;  // position 7 needs page index 2
  expect_param_error(run(p, {0, 1, 2, 3}), "max_pages");
  p.max_pages = 3;
  p.kv_capacity = 0;
  expect_param_error(run(p, table), "kv_capacity");
}

// -------------------------------------------------------------- vision ----

TEST(VisionReference, PosEmbedAddUsesRowMajorPatchGrid) {
  // 5 patches on a grid 2 wide: (x, y) = (0,0) (1,0) (0,1) (1,1) (0,2).
  // hidden[p, d] = 100 p, X[i, d] = 10 i + d, Y[j, d] = 1000 j.
  const uint32_t P = 5, Dh = 2, N = 3;
  std::vector<float> hidden(P * Dh), table(2 * N * Dh);
  for (uint32_t p = 0; p < P; ++p)
    for (uint32_t d = 0; d < Dh; ++d) hidden[p * Dh + d] = 100.0f * float(p);
  for (uint32_t i = 0; i < N; ++i)
    for (uint32_t d = 0; d < Dh; ++d) {
      table[i * Dh + d] = 10.0f * float(i) + float(d);
      table[(N + i) * Dh + d] = 1000.0f * float(i);
    }
  auto out = pos_embed_add(hidden, table, P, Dh, N, 2);
  const std::vector<double> want = {0, 1, 110, 111, 1200, 1201, 1310, 1311, 2400, 2401};
  EXPECT_EQ(out, want);

  expect_param_error([&] { pos_embed_add(hidden, table, P, Dh, 2, 2); }, "table");
  std::vector<float> small(2 * 2 * Dh);
  expect_param_error([&] { pos_embed_add(hidden, small, P, Dh, 2, 2); }, "pos_size");  // y = 2
  expect_param_error([&] { pos_embed_add(hidden, small, P, Dh, 2, 3); }, "pos_size");  // x = 2
  expect_param_error([&] { pos_embed_add(hidden, table, P, Dh, N, 0); }, "patches_x");
  expect_param_error([&] { pos_embed_add(std::span(hidden).first(3), table, P, Dh, N, 2); }, "hidden");
}

TEST(VisionReference, HandComputedAttention) {
  // P = 2, H = 1, D = 1, scale 1. Query 0: q = 1, keys 0 and ln 3 -> (1/4, 3/4)
  // over v = (4, 8): 7. Query 1: q = 0 -> uniform: 6.
  const float ln3 = std::log(3.0f);
  std::vector<float> q = {1, 0}, k = {0, ln3}, v = {4, 8};
  auto out = vision_attention(q, k, v, 2, 1, 1, 1.0);
  EXPECT_NEAR(out[0], 7.0, 1e-6);
  EXPECT_DOUBLE_EQ(out[1], 6.0);
}

TEST(VisionReference, MatchesNonCausalTextAttention) {
  const uint32_t P = 6, H = 2, D = 4;
  auto q = random_floats(P * H * D, 30, -2, 2), k = random_floats(P * H * D, 31, -2, 2);
  auto v = random_floats(P * H * D, 32);
  auto p = text_params(1, P, H, H, D, P);
  p.kv_len = {P};
  p.scale = 0.7f;
  auto want = text_attention(p, q, k, v);
  auto got = vision_attention(q, k, v, P, H, D, double{0.7f});
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-14) << i;

  expect_param_error([&] { vision_attention(std::span(q).first(4), k, v, P, H, D, 1.0); }, "q");
  expect_param_error([&] { vision_attention(q, k, std::span(v).first(4), P, H, D, 1.0); }, "v");
  expect_param_error([&] { vision_attention(q, k, v, P, H, D, INFINITY); }, "scale");
}

// --------------------------------------------------------------- audio ----

// per_dim_scale value that makes the query factor D^-1/2 / ln 2 * softplus(x)
// exactly 1 for D = 2: softplus(x) = sqrt(2) ln 2, so x = ln(2^sqrt(2) - 1).
float unit_query_scale() { return static_cast<float>(std::log(std::pow(2.0, std::sqrt(2.0)) - 1.0)); }

struct AudioCase {
  AudioAttentionParams p;
  std::vector<float> q, k, v, per_dim, rel;
  std::vector<double> run() const { return audio_attention(p, q, k, v, per_dim, rel); }
};

// T = 3, H = 1, D = 2, W = 2, no cap, unscaled keys, q~ = q = (1, 0), k = 0,
// so each logit is R[s][0] with s = c - r: R[0] = ln 4, R[1] = ln 2, R[2] = 0.
// v0 = (1, 0), v1 = (0, 1), v2 = (2, 2).
AudioCase rel_pos_case(uint32_t max_past, uint32_t max_future, bool include_past_edge) {
  AudioCase c;
  c.p.frames = 3;
  c.p.num_heads = 1;
  c.p.head_dim = 2;
  c.p.chunk = 2;
  c.p.max_past = max_past;
  c.p.max_future = max_future;
  c.p.logit_cap = 0.0f;
  c.p.scale_keys = false;
  c.p.include_past_edge = include_past_edge;
  c.q = {1, 0, 1, 0, 1, 0};
  c.k = std::vector<float>(6, 0.0f);
  c.v = {1, 0, 0, 1, 2, 2};
  c.per_dim = {unit_query_scale(), unit_query_scale()};
  c.rel = {std::log(4.0f), 0, std::log(2.0f), 0, 0, 0};
  return c;
}

void expect_rows(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6) << "element " << i;
}

TEST(AudioReference, RelativePositionRowIsContextSlotMinusQuery) {
  // P = 2, F = 0, C = 4; block u holds t_k = 2u + c - 2; distance t_q - t_k = 2 - s.
  // include_past_edge: distances 0..2 visible.
  //   t_q = 0 (u 0, r 0): key 0 only (c 2, s 2)                    -> v0 = (1, 0)
  //   t_q = 1 (u 0, r 1): key 0 (c 2, s 1: ln 2), key 1 (c 3, s 2: 0)
  //                       weights 2 : 1 -> (2 v0 + v1) / 3        = (2/3, 1/3)
  //   t_q = 2 (u 1, r 0): keys 0, 1, 2 at s = 0, 1, 2: ln 4, ln 2, 0
  //                       weights 4 : 2 : 1 -> (4 v0 + 2 v1 + v2) / 7 = (6/7, 4/7)
  // Indexing R mirrored (P + r - c) would give weights 1 : 2 and 1 : 2 : 4.
  expect_rows(rel_pos_case(2, 0, true).run(), {1, 0, 2.0 / 3, 1.0 / 3, 6.0 / 7, 4.0 / 7});
}

TEST(AudioReference, PastEdgeExcludedByDefault) {
  // Same case, distances 0..1 only: t_q = 2 loses key 0 (distance 2):
  //   keys 1 (ln 2), 2 (0): 2 : 1 -> (2 v1 + v2) / 3 = (2/3, 4/3).
  expect_rows(rel_pos_case(2, 0, false).run(), {1, 0, 2.0 / 3, 1.0 / 3, 2.0 / 3, 4.0 / 3});
}

TEST(AudioReference, FutureFramesUpToMaxFuture) {
  // P = 1, F = 1, C = 4; t_k = 2u + c - 1; s = c - r; distance = 1 - s, in [-1, 1].
  //   t_q = 0: key 0 (s 1: ln 2), key 1 (s 2: 0)            -> (2 v0 + v1) / 3 = (2/3, 1/3)
  //   t_q = 1: keys 0, 1, 2 (s 0, 1, 2)                     -> (4 v0 + 2 v1 + v2) / 7 = (6/7, 4/7)
  //   t_q = 2: keys 1 (s 0: ln 4), 2 (s 1: ln 2); 3 >= T    -> (4 v1 + 2 v2) / 6 = (2/3, 4/3)
  expect_rows(rel_pos_case(1, 1, true).run(), {2.0 / 3, 1.0 / 3, 6.0 / 7, 4.0 / 7, 2.0 / 3, 4.0 / 3});
}

TEST(AudioReference, QueryAndKeyScalingAndLogitCap) {
  // T = 2, D = 2, W = 2, P = 1, past edge on, R = 0. Query 1 sees keys 0 and 1.
  // per_dim_scale = (0, 5): q~ = q / sqrt(2) / ln 2 * (ln 2, softplus(5)).
  // q1 = (1, 1), k0 = 0, k1 = (1, 1): z0 = 0,
  //   z1 = kf / (sqrt(2) ln 2) * (ln 2 + ln(1 + e^5)), kf = ln(1 + e) / ln 2 or 1,
  // capped at 50: z1 <- 50 tanh(z1 / 50); out1 = (1 - w, w), w = 1 / (1 + e^-z1).
  AudioCase c;
  c.p.frames = 2;
  c.p.num_heads = 1;
  c.p.head_dim = 2;
  c.p.chunk = 2;
  c.p.max_past = 1;
  c.p.include_past_edge = true;
  c.q = {0, 0, 1, 1};
  c.k = {0, 0, 1, 1};
  c.v = {1, 0, 0, 1};
  c.per_dim = {0, 5};
  c.rel = std::vector<float>(4, 0.0f);
  for (bool scale_keys : {true, false}) {
    c.p.scale_keys = scale_keys;
    const double kf = scale_keys ? std::log1p(std::numbers::e) / std::numbers::ln2 : 1.0;
    double z1 = kf / (std::sqrt(2.0) * std::numbers::ln2) * (std::numbers::ln2 + std::log1p(std::exp(5.0)));
    z1 = 50 * std::tanh(z1 / 50);
    const double w = 1 / (1 + std::exp(-z1));
    expect_rows(c.run(), {1, 0, 1 - w, w});
  }

  // Cap 1: q~ = q1 = (100, 0) (unit query scale), k1 = (1, 0): z1 = tanh(100) ~ 1,
  // so w = e / (1 + e); with the cap off, z1 = 100 and w ~ 1.
  c.p.scale_keys = false;
  c.p.logit_cap = 1.0f;
  c.per_dim = {unit_query_scale(), unit_query_scale()};
  c.q = {0, 0, 100, 0};
  c.k = {0, 0, 1, 0};
  const double e = std::numbers::e;
  expect_rows(c.run(), {1, 0, 1 / (1 + e), e / (1 + e)});
  c.p.logit_cap = 0.0f;
  expect_rows(c.run(), {1, 0, 0, 1});
}

TEST(AudioReference, ChunkSizeDoesNotChangeTheBand) {
  // Every query sees t_k in [t_q - P, t_q + F] whatever the block size, so W only
  // changes how the work is cut, not the result.
  AudioCase c;
  c.p.frames = 17;
  c.p.num_heads = 2;
  c.p.head_dim = 3;
  c.p.max_past = 4;
  c.p.max_future = 2;
  const size_t n = 17 * 2 * 3;
  c.q = random_floats(n, 40, -2, 2);
  c.k = random_floats(n, 41, -2, 2);
  c.v = random_floats(n, 42);
  c.per_dim = random_floats(3, 43);
  c.rel = random_floats(7 * 2 * 3, 44);
  c.p.chunk = 1;
  const auto want = c.run();
  for (uint32_t w : {2u, 5u, 12u, 40u}) {
    c.p.chunk = w;
    EXPECT_EQ(c.run(), want) << "chunk " << w;
  }
}

TEST(AudioReference, NoVisibleKeyGivesZeros) {
  // P = 0 without the past edge leaves an empty band: every row is zero.
  auto c = rel_pos_case(0, 0, false);
  c.rel = {0, 0};
  expect_rows(c.run(), std::vector<double>(6, 0.0));
  c.p.include_past_edge = true;  // now each frame sees itself
  expect_rows(c.run(), {1, 0, 0, 1, 2, 2});
}

TEST(AudioReference, ValidationNamesTheParameter) {
  const auto base = rel_pos_case(2, 0, true);
  auto expect = [&](auto mutate, const std::string& param) {
    auto c = base;
    mutate(c);
    expect_param_error([&] { c.run(); }, param);
  };
  expect([](AudioCase& c) { c.p.chunk = 0; }, "chunk");
  expect([](AudioCase& c) { c.p.num_heads = 0; }, "num_heads");
  expect([](AudioCase& c) { c.p.head_dim = 0; }, "head_dim");
  expect([](AudioCase& c) { c.p.logit_cap = -1.0f; }, "logit_cap");
  expect([](AudioCase& c) { c.q.pop_back(); }, "q");
  expect([](AudioCase& c) { c.k.push_back(0); }, "k");
  expect([](AudioCase& c) { c.v.clear(); }, "v");
  expect([](AudioCase& c) { c.per_dim.pop_back(); }, "per_dim_scale");
  expect([](AudioCase& c) { c.p.max_future = 1; }, "rel_pos");  // needs 4 rows, has 3
}

// ----------------------------------------------------------- tolerance ----

TEST(Tolerance, LoosestDtypeWins) {
  EXPECT_DOUBLE_EQ(tolerance_for(DType::f32, DType::f32, DType::f32).abs_rel, 2e-5);
  EXPECT_DOUBLE_EQ(tolerance_for(DType::f32, DType::f16, DType::f32).abs_rel, 4e-3);
  EXPECT_DOUBLE_EQ(tolerance_for(DType::f16, DType::f16, DType::bf16).abs_rel, 2.5e-2);
  EXPECT_DOUBLE_EQ(tolerance_for(DType::f16, DType::i8, DType::f16).abs_rel, 3e-2);
  EXPECT_DOUBLE_EQ(tolerance_for(DType::f32, DType::i4, DType::f32).abs_rel, 0.25);
  expect_param_error([] { tolerance_for(DType::f32, DType::u32, DType::f32); }, "kv dtype");
}

TEST(Tolerance, CompareReportsRelativeErrorAndWorstElement) {
  const std::vector<float> got = {1.0f, -4.002f, 0.5f};
  const std::vector<double> want = {1.0, -4.0, 0.5005};
  const auto r = compare(got, want, Tolerance{1e-3});
  EXPECT_NEAR(r.max_abs_err, 0.002, 1e-6);
  EXPECT_DOUBLE_EQ(r.max_ref, 4.0);
  EXPECT_NEAR(r.rel_err, 0.0005, 1e-6);
  EXPECT_EQ(r.worst_index, 1u);
  EXPECT_TRUE(r.passed) << to_string(r, Tolerance{1e-3});
  EXPECT_FALSE(compare(got, want, Tolerance{1e-4}).passed);
  EXPECT_DOUBLE_EQ(max_relative_error(got, want), r.rel_err);

  // An all-zero reference does not divide by zero.
  const std::vector<float> zeros(3, 0.0f);
  const std::vector<double> zero_ref(3, 0.0);
  EXPECT_TRUE(compare(zeros, zero_ref, Tolerance{0.0}).passed);
  EXPECT_GT(max_relative_error(got, zero_ref), 1e20);

  expect_param_error([&] { compare(std::span(got).first(2), want, Tolerance{1}); }, "got");
}

TEST(Tolerance, NonFiniteValuesFail) {
  const std::vector<double> want = {1.0, 2.0, 3.0};
  for (float bad : {NAN, INFINITY, -INFINITY}) {
    const std::vector<float> got = {1.0f, bad, 300.0f};
    const auto r = compare(got, want, Tolerance{1e9});
    EXPECT_FALSE(r.passed) << bad;
    EXPECT_EQ(r.worst_index, 1u);
    EXPECT_TRUE(std::isinf(r.rel_err));
    EXPECT_FALSE(max_relative_error(got, want) <= 1e9);
    EXPECT_NE(to_string(r, Tolerance{1e9}).find("FAILED"), std::string::npos);
  }
}

TEST(Tolerance, NanWhereTheOracleHasNanMatches) {
  const std::vector<double> want = {1.0, NAN, INFINITY, 2.0};
  const std::vector<float> got = {1.0f, NAN, INFINITY, 2.0f};
  EXPECT_TRUE(compare(got, want, Tolerance{1e-6}).passed);
  // A NaN the oracle does not have, or a finite value where it has NaN, still fails.
  EXPECT_FALSE(compare(std::vector<float>{NAN, NAN, INFINITY, 2.0f}, want, Tolerance{1e9}).passed);
  EXPECT_FALSE(compare(std::vector<float>{1.0f, 0.0f, INFINITY, 2.0f}, want, Tolerance{1e9}).passed);
  EXPECT_FALSE(compare(std::vector<float>{1.0f, NAN, -INFINITY, 2.0f}, want, Tolerance{1e9}).passed);
}

// ------------------------------------------------------------ rounding ----

TEST(Rounding, F16KnownValues) {
  EXPECT_EQ(float_to_f16(1.0f), 0x3c00);
  EXPECT_EQ(float_to_f16(-2.0f), 0xc000);
  EXPECT_EQ(float_to_f16(0.0f), 0x0000);
  EXPECT_EQ(float_to_f16(-0.0f), 0x8000);
  EXPECT_EQ(float_to_f16(65504.0f), 0x7bff);       // largest finite
  EXPECT_EQ(float_to_f16(65519.0f), 0x7bff);       // below the halfway point to 65536
  EXPECT_EQ(float_to_f16(65520.0f), 0x7c00);       // tie with odd 0x7bff: rounds up to inf
  EXPECT_EQ(float_to_f16(1e6f), 0x7c00);
  EXPECT_EQ(float_to_f16(-INFINITY), 0xfc00);
  EXPECT_EQ(float_to_f16(std::ldexp(1.0f, -14)), 0x0400);  // smallest normal
  EXPECT_EQ(float_to_f16(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_f16(std::ldexp(1.0f, -25)), 0x0000);  // tie with even 0: down
  EXPECT_EQ(float_to_f16(std::ldexp(1.5f, -25)), 0x0001);  // above the tie: up
  EXPECT_EQ(float_to_f16(std::ldexp(3.0f, -25)), 0x0002);  // tie between 1 and 2: even 2
  EXPECT_EQ(float_to_f16(std::ldexp(1023.0f, -24)), 0x03ff);  // largest subnormal
  EXPECT_EQ(float_to_f16(std::ldexp(2047.0f, -25)), 0x0400);  // rounds up into the smallest normal
  EXPECT_EQ(float_to_f16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);      // tie: even
  EXPECT_EQ(float_to_f16(1.0f + std::ldexp(3.0f, -11)), 0x3c02);      // tie: even
  EXPECT_EQ(float_to_f16(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)), 0x3c01);
  EXPECT_EQ(float_to_f16(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_TRUE(std::isnan(f16_to_float(float_to_f16(NAN))));
  // A NaN whose payload sits only in the low f32 bits must stay NaN.
  EXPECT_TRUE(std::isnan(f16_to_float(float_to_f16(std::bit_cast<float>(0x7f800001u)))));

  EXPECT_EQ(f16_to_float(0x3555), 0.333251953125f);
  EXPECT_EQ(f16_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(f16_to_float(0x8000), 0.0f);
  EXPECT_TRUE(std::signbit(f16_to_float(0x8000)));
  EXPECT_EQ(f16_to_float(0x7c00), INFINITY);
}

TEST(Rounding, F16RoundTripsEveryValue) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const float f = f16_to_float(static_cast<uint16_t>(bits));
    if (std::isnan(f)) {
      EXPECT_EQ(bits & 0x7c00u, 0x7c00u);
      EXPECT_TRUE(std::isnan(f16_to_float(float_to_f16(f))));
      continue;
    }
    ASSERT_EQ(float_to_f16(f), bits) << std::hex << bits;
  }
}

TEST(Rounding, BF16KnownValuesAndRoundTrip) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(float_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);  // tie: even
  EXPECT_EQ(float_to_bf16(1.0f + std::ldexp(3.0f, -8)), 0x3f82);  // tie: even
  EXPECT_EQ(float_to_bf16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)), 0x3f81);
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::max()), 0x7f80);  // overflows to inf
  EXPECT_EQ(float_to_bf16(-0.0f), 0x8000);
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(std::bit_cast<float>(0x7f800001u)))));
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(std::bit_cast<float>(0xffffffffu)))));
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const float f = bf16_to_float(static_cast<uint16_t>(bits));
    if (std::isnan(f)) continue;
    ASSERT_EQ(float_to_bf16(f), bits) << std::hex << bits;
  }
}

TEST(Rounding, RoundToDType) {
  EXPECT_EQ(round_to(DType::f32, 0.1f), 0.1f);
  EXPECT_EQ(round_to(DType::f16, 0.1f), f16_to_float(0x2e66));
  EXPECT_EQ(round_to(DType::bf16, 0.1f), bf16_to_float(0x3dcd));
  std::vector<float> values = {0.1f, 1.0f, 65520.0f};
  round_to(DType::f16, values);
  EXPECT_EQ(values, (std::vector<float>{f16_to_float(0x2e66), 1.0f, INFINITY}));
  expect_param_error([] { round_to(DType::i8, 1.0f); }, "dtype");
  expect_param_error([] { round_to(DType::u32, std::span<float>{}); }, "dtype");
}

}  // namespace
}  // namespace vkattn::reference

// Strided tensors: Q, K and V as views into one fused QKV projection buffer,
// and an output written into a wider buffer, as inference runtimes lay them out.
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

class Strides : public testing::GpuTest {};

constexpr uint32_t B = 2, S = 12, H = 4, HKV = 2, D = 64, W = H + 2 * HKV;  // W heads per fused token row

TEST_F(Strides, FusedQkvViewsAndWideOutput) {
  Context& c = ctx();
  std::mt19937 rng(3);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> fused(size_t(B) * S * W * D);
  for (auto& x : fused) x = dist(rng);
  Tensor qkv = c.tensor(DType::f32, {B, S, W, D});
  c.upload(qkv, fused);
  // Out: [B, S, 2H, D]; the call writes heads 0..H-1 of each token, the rest keep a sentinel.
  Tensor wide = c.tensor(DType::f32, {B, S, 2 * H, D});
  c.upload(wide, std::vector<float>(size_t(B) * S * 2 * H * D, 7.0f));

  const Shape token_strides{uint64_t(S) * W * D, uint64_t(W) * D, D, 1};
  TextAttentionTensors t;
  t.q = c.wrap(qkv.buffer(), 0, qkv.bytes(), DType::f32, {B, S, H, D}).strided(token_strides);
  t.k = c.wrap(qkv.buffer(), H * D * 4, qkv.bytes() - H * D * 4, DType::f32, {B, S, HKV, D}).strided(token_strides);
  t.v = c.wrap(qkv.buffer(), (H + HKV) * D * 4, qkv.bytes() - (H + HKV) * D * 4, DType::f32, {B, S, HKV, D})
            .strided(token_strides);
  t.out = c.wrap(wide.buffer(), 0, wide.bytes(), DType::f32, {B, S, H, D})
              .strided({uint64_t(S) * 2 * H * D, uint64_t(2) * H * D, D, 1});

  TextAttentionParams p;
  p.batch = B;
  p.seq_len = S;
  p.num_heads = H;
  p.num_kv_heads = HKV;
  p.head_dim = D;
  p.kv_capacity = S;
  p.kv_len = {S};
  p.causal = true;
  Recorder rec(c);
  text_attention(rec, p, t);
  rec.run();

  // The oracle takes contiguous tensors: gather them from the fused buffer.
  std::vector<float> q, k, v;
  for (uint32_t b = 0; b < B; ++b)
    for (uint32_t s = 0; s < S; ++s)
      for (uint32_t h = 0; h < W; ++h) {
        auto row = fused.begin() + ((size_t(b) * S + s) * W + h) * D;
        (h < H ? q : h < H + HKV ? k : v).insert((h < H ? q : h < H + HKV ? k : v).end(), row, row + D);
      }
  auto want = reference::text_attention(p, q, k, v);
  auto all = c.download_as<float>(wide);
  std::vector<float> got;
  for (uint32_t b = 0; b < B; ++b)
    for (uint32_t s = 0; s < S; ++s)
      for (uint32_t h = 0; h < 2 * H; ++h) {
        auto row = all.begin() + ((size_t(b) * S + s) * 2 * H + h) * D;
        if (h < H) got.insert(got.end(), row, row + D);
        else
          for (uint32_t d = 0; d < D; ++d) ASSERT_EQ(row[d], 7.0f) << "wrote outside the output view";
      }
  auto r = reference::compare(got, want, {2e-5});
  EXPECT_TRUE(r.passed) << reference::to_string(r, {2e-5});
}

TEST_F(Strides, UnalignedStridesAreRejected) {
  Context& c = ctx();
  TextAttentionParams p;
  p.num_heads = 2;
  p.num_kv_heads = 2;
  p.head_dim = 64;
  p.kv_capacity = 8;
  p.kv_len = {8};
  p.start_pos = {7};
  Tensor big = c.tensor(DType::f32, {4096});
  TextAttentionTensors t;
  t.q = big.reshaped({1, 1, 2, 64}).strided({200, 200, 68, 1});  // 68: rows off the 16-byte grid
  t.k = c.tensor(DType::f32, {1, 8, 2, 64});
  t.v = c.tensor(DType::f32, {1, 8, 2, 64});
  t.out = c.tensor(DType::f32, {1, 1, 2, 64});
  Recorder rec(c);
  try {
    text_attention(rec, p, t);
    FAIL() << "unaligned strides were accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
    EXPECT_THAT(e.what(), ::testing::HasSubstr("q: expected strides [multiple of 8"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("got [200, 200, 68, 1]"));
  }
  EXPECT_EQ(rec.impl().dispatch_count(), 0u);
  // A view reaching past its buffer is refused when it is made.
  EXPECT_THROW(big.reshaped({1, 1, 2, 64}).strided({64, 64, 4096, 1}), Error);  // head 1 at 4096
}

}  // namespace
}  // namespace vkattn

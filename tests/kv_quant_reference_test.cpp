// The quantized KV format on the host: the judge of kv_append and of the
// kernels' dequantization, checked on values worked out by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "reference/kv_quant_reference.hpp"
#include "reference/rounding.hpp"
#include "shaders/kv_quant_interface.h"
#include "vkattn/kvcache.hpp"

namespace vkattn::reference {
namespace {

TEST(KvQuantReference, Int8RowPackedLittleEndianWithTheRoundedScale) {
  // absmax 2.54: scale f16(0.02) = 0.0200042724609375 (bits 0x251f), so 2.54 -> 126.97 -> 127.
  const std::vector<float> row{2.54f, -2.54f, 0.0f, 1.0f, -1.0f, 0.5f, 0.01f, -0.03f};
  const QuantizedRows q = quantize_rows(DType::i8, KV_QUANT_GROUP_ROW, 8, row);
  ASSERT_EQ(q.words.size(), 2u);
  ASSERT_EQ(q.scales.size(), 1u);
  EXPECT_EQ(q.scales[0], float_to_f16(2.54f / 127.0f));
  const double s = f16_to_float(q.scales[0]);
  auto code = [&](int i) {
    return int8_t((q.words[i / 4] >> (8 * (i % 4))) & 0xff);
  };
  for (int i = 0; i < 8; ++i) EXPECT_EQ(code(i), int(std::nearbyint(std::clamp(row[i] / s, -127.0, 127.0)))) << i;
  EXPECT_EQ(q.words[0] & 0xff, 127u);
  EXPECT_EQ((q.words[0] >> 8) & 0xff, 0x81u);  // -127 in two's complement
  const std::vector<float> back = dequantize_rows(DType::i8, KV_QUANT_GROUP_ROW, 8, q.words, q.scales);
  for (int i = 0; i < 8; ++i) EXPECT_LE(std::fabs(back[i] - row[i]), s / 2 + 1e-7) << i;
}

TEST(KvQuantReference, Int4HalvesRoundToEvenAndClampAtSeven) {
  // Scale 1 (absmax 7): 2.5 -> 2 and 3.5 -> 4 (half to even); -7 is 0x9.
  const std::vector<float> row{7.0f, 2.5f, 3.5f, -7.0f, -0.5f, 0.5f, 1.5f, -2.5f};
  const QuantizedRows q = quantize_rows(DType::i4, KV_QUANT_GROUP_ROW, 8, row);
  ASSERT_EQ(q.words.size(), 1u);
  EXPECT_EQ(q.scales[0], 0x3c00u);
  EXPECT_EQ(q.words[0], 0xe2009427u);  // lanes 7..0: -2, 2, 0, 0, -7, 4, 2, 7
}

TEST(KvQuantReference, ZeroAndTinyRowsKeepAUsableScale) {
  EXPECT_EQ(quant_scale_bits(0.0f, 127), KV_QUANT_SCALE_ONE_BITS);
  EXPECT_EQ(quant_scale_bits(1e-9f, 127), KV_QUANT_SCALE_MIN_BITS);  // would flush to 0 in f16
  EXPECT_EQ(quant_scale_bits(1e9f, 7), KV_QUANT_SCALE_MAX_BITS);
  // A subnormal scale is kept, not flushed: absmax 1e-5 / 127 = 7.9e-8 -> 1 x 2^-24.
  EXPECT_EQ(quant_scale_bits(1e-5f, 127), 1u);
  EXPECT_EQ(quant_scale_bits(2e-5f, 127), 3u);
}

TEST(KvQuantReference, GroupsOf32HaveTheirOwnScale) {
  std::vector<float> row(40, 0.0f);
  row[0] = 127.0f;   // group 0: scale 1
  row[33] = 0.254f;  // group 1 (elements 32..39): scale f16(0.002)
  const QuantizedRows q = quantize_rows(DType::i8, KV_QUANT_GROUP, 40, row);
  ASSERT_EQ(q.scales.size(), 2u);
  EXPECT_EQ(q.scales[0], 0x3c00u);
  EXPECT_EQ(q.scales[1], float_to_f16(0.254f / 127.0f));
  EXPECT_EQ((q.words[33 / 4] >> 8) & 0xff, 127u);
  const std::vector<double> err = quant_row_error(DType::i8, KV_QUANT_GROUP, 40, row, q.scales);
  EXPECT_DOUBLE_EQ(err[0], 0.5);  // the larger group's half step
}

TEST(KvQuantReference, AttentionBoundGrowsWithTheKeyError) {
  TextAttentionParams p;
  p.head_dim = 8;
  p.scale = 1.0f;
  const std::vector<float> q(8, 1.0f), v(16, 2.0f);
  const std::vector<double> none{0.0}, half{0.5}, vhalf{0.25};
  EXPECT_DOUBLE_EQ(quant_attention_bound(p, q, v, none, none)[0], 0.0);
  EXPECT_DOUBLE_EQ(quant_attention_bound(p, q, v, none, vhalf)[3], 0.25);
  const std::vector<double> small{0.01};
  EXPECT_DOUBLE_EQ(quant_attention_bound(p, q, v, small, none)[7], std::expm1(2 * 8 * 0.01) * 2.0);
  EXPECT_DOUBLE_EQ(quant_attention_bound(p, q, v, half, none)[7], 2.0 * 2.0);  // the weights differ by 2 at most
}

// What `vkattn demo` lists: K and V of every KV head, scales included.
TEST(KvQuantReference, BytesPerTokenOfEachCacheKind) {
  EXPECT_EQ(kv_bytes_per_token(DType::f16, 8, 128), 4096u);
  EXPECT_EQ(kv_bytes_per_token(DType::f32, 8, 128), 8192u);
  EXPECT_EQ(kv_bytes_per_token(DType::i8, 8, 128), 2u * 8 * (128 + 2));
  EXPECT_EQ(kv_bytes_per_token(DType::i8, 8, 128, KV_QUANT_GROUP), 2u * 8 * (128 + 8));
  EXPECT_EQ(kv_bytes_per_token(DType::i4, 8, 128), 2u * 8 * (64 + 2));
  EXPECT_EQ(kv_bytes_per_token(DType::i4, 1, 40, KV_QUANT_GROUP), 2u * (20 + 4));
}

}  // namespace
}  // namespace vkattn::reference

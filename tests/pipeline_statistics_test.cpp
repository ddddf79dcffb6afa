// The driver's pipeline statistics (VK_KHR_pipeline_executable_properties):
// captured on every pipeline of a context that asks for them where the device
// offers the extension, never otherwise; and the pipelines a recording bound.
#include <gtest/gtest.h>

#include <vector>

#include "test_context.hpp"
#include "vk/recorder_impl.hpp"
#include "vk/runtime.hpp"
#include "vkattn/recorder.hpp"
#include "vkattn/text.hpp"

namespace vkattn {
namespace {

// Each format the driver may report reads as its value.
TEST(PipelineStatisticText, EveryFormat) {
  auto text = [](decltype(vk::PipelineStatistic::value) v) { return vk::value_text({"exe", "n", "d", v}); };
  EXPECT_EQ(text(true), "true");
  EXPECT_EQ(text(int64_t{-3}), "-3");
  EXPECT_EQ(text(uint64_t{18446744073709551615ull}), "18446744073709551615");
  EXPECT_EQ(text(0.5), "0.5");
}

class PipelineStatistics : public testing::GpuTest {
 protected:
  // One decode call (H4/Hkv2, D64, 32 keys) recorded on `c`; returns what the recorder bound.
  static std::vector<const vk::Pipeline*> record_decode(Context& c, Recorder& rec) {
    TextAttentionParams p;
    p.num_heads = 4;
    p.num_kv_heads = 2;
    p.head_dim = 64;
    p.kv_capacity = 32;
    p.kv_len = {32};
    p.start_pos = {31};
    TextAttentionTensors t;
    t.q = c.tensor(DType::f16, {1, 1, 4, 64});
    t.k = c.tensor(DType::f16, {1, 32, 2, 64});
    t.v = c.tensor(DType::f16, {1, 32, 2, 64});
    t.out = c.tensor(DType::f16, {1, 1, 4, 64});
    text_attention(rec, p, t);
    return rec.impl().bound_pipelines();
  }
};

TEST_F(PipelineStatistics, CapturedOnEveryPipelineWhereTheDeviceOffersThem) {
  ContextOptions options;
  options.pipeline_statistics = 1;
  Context c(options);
  const bool offered = c.caps().pipeline_executable_info;
  EXPECT_EQ(c.runtime().pipelines().captures_statistics(), offered);
  Recorder rec(c);
  const auto bound = record_decode(c, rec);
  ASSERT_FALSE(bound.empty());
  for (const vk::Pipeline* p : bound) {
    EXPECT_FALSE(p->key.module.empty());
    // Lavapipe (Mesa 22.3) does not offer the extension: there CI checks that nothing is captured.
    EXPECT_EQ(!p->statistics.empty(), offered) << p->key.module;
    for (const auto& s : p->statistics) {
      EXPECT_FALSE(s.executable.empty()) << p->key.module;
      EXPECT_FALSE(s.name.empty()) << p->key.module;
      EXPECT_FALSE(vk::value_text(s).empty()) << p->key.module << " " << s.name;
    }
  }
}

TEST_F(PipelineStatistics, NotCapturedUnlessAskedFor) {
  ContextOptions options;
  options.pipeline_statistics = 0;
  Context c(options);
  EXPECT_FALSE(c.runtime().pipelines().captures_statistics());
  Recorder rec(c);
  const auto bound = record_decode(c, rec);
  ASSERT_FALSE(bound.empty());
  for (const vk::Pipeline* p : bound) EXPECT_TRUE(p->statistics.empty()) << p->key.module;
}

// Each pipeline once, however many dispatches bind it; reset forgets them.
// The two calls are unrelated and recorded without a barrier: neither binds
// anything the other writes (validation, on in the tests, would say so).
TEST_F(PipelineStatistics, RecorderListsEachBoundPipelineOnce) {
  Recorder rec(ctx());
  const auto once = record_decode(ctx(), rec);
  const auto twice = record_decode(ctx(), rec);
  EXPECT_EQ(once, twice);
  rec.reset();
  EXPECT_TRUE(rec.impl().bound_pipelines().empty());
}

}  // namespace
}  // namespace vkattn

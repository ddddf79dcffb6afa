// Benchmark machinery below the CLI: suite files (pure: parsing, grid
// expansion, errors naming the field, skip reasons on synthetic caps), the
// GPU fill pattern, the probes (the read probe's sum; the coopmat probe where
// the device has it) and the text runner's parity on a sample.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "check/bench_probes.hpp"
#include "check/bench_run.hpp"
#include "check/bench_suite.hpp"
#include "expect_error.hpp"
#include "reference/rounding.hpp"
#include "test_context.hpp"

namespace vkattn {
namespace {

using ::testing::HasSubstr;
using testing::expect_error;

check::BenchSuite parse(const std::string& text) { return check::parse_bench_suite(text, "t.json"); }

std::string error_of(const std::string& text) {
  return expect_error([&] { parse(text); }).what();
}

TEST(BenchSuite, GridExpandsAsAProductInFileOrder) {
  const auto s = parse(R"({"suite": "g", "defaults": {"heads": 8, "head_dim": 64},
    "grids": [{"fields": {"kv_dtype": "f32"},
               "axes": {"batch": [1, 4], "kv": [{"kv_heads": 8}, {"kv_heads": 2, "kv_len": 300}],
                        "layout": [{"layout": "contiguous"}, {"layout": "paged", "page_size": 32}]}}],
    "cases": [{"label": "one", "seq_len": 16, "causal": false}]})");
  EXPECT_EQ(s.name, "g");
  ASSERT_EQ(s.cases.size(), 9u);
  // Last axis fastest.
  EXPECT_EQ(s.cases[0].name, "decode B1 S1 H8/8 D64 L1 contiguous f16/f32");
  EXPECT_EQ(s.cases[1].name, "decode B1 S1 H8/8 D64 L1 paged ps32 f16/f32");
  EXPECT_EQ(s.cases[3].name, "decode B1 S1 H8/2 D64 L300 paged ps32 f16/f32");
  EXPECT_EQ(s.cases[4].text.params.batch, 4u);
  const auto& paged = s.cases[3].text.params;
  EXPECT_EQ(paged.layout, KvLayout::paged);
  EXPECT_EQ(paged.kv_capacity, 32u);
  EXPECT_EQ(paged.max_pages, 10u);  // ceil(300 / 32)
  EXPECT_EQ(paged.num_pages, 10u);
  EXPECT_EQ(paged.start_pos[0], 299u);
  EXPECT_EQ(s.cases[8].name, "one prefill B1 S16 H8/8 D64 L16 contiguous f16/f16 noncausal");
  EXPECT_FALSE(s.cases[8].text.params.causal);
}

TEST(BenchSuite, FamiliesAndProbes) {
  const auto s = parse(R"({"defaults": {"q_dtype": "f32"}, "cases": [
    {"family": "vision", "patches": 64, "heads": 2, "head_dim": 72, "scale": 1.0},
    {"family": "audio", "frames": 40, "heads": 2, "head_dim": 64, "dtype": "f32", "max_future": 2},
    {"family": "probe", "probe": "read_bandwidth", "bytes": 1048576},
    {"family": "probe", "probe": "coopmat_fp16", "name": "peak"},
    {"family": "probe", "probe": "dispatch_floor"},
    {"family": "bdpa", "batch": 2, "heads": 8, "kv_heads": 2, "head_dim": 64, "kv_len": 300, "vocab": 40,
     "basis_dtype": "bf16", "rotary_dim": 32}]})");
  ASSERT_EQ(s.cases.size(), 6u);
  EXPECT_EQ(s.name, "t");  // the file's stem
  EXPECT_EQ(s.cases[0].family, check::BenchFamily::vision);
  EXPECT_EQ(s.cases[0].name, "vision P64 H2 D72 phd f16");  // suite defaults of other families are ignored
  EXPECT_EQ(s.cases[1].audio.params.max_future, 2u);
  EXPECT_EQ(s.cases[1].audio.dtype, DType::f32);
  EXPECT_EQ(s.cases[2].probe.bytes, 1048576u);
  EXPECT_EQ(s.cases[3].name, "peak");
  EXPECT_EQ(s.cases[3].probe.kind, check::ProbeKind::coopmat_fp16);
  EXPECT_EQ(s.cases[4].name, "probe dispatch_floor");
  EXPECT_EQ(s.cases[4].probe.kind, check::ProbeKind::dispatch_floor);
  EXPECT_EQ(check::to_string(check::ProbeKind::dispatch_floor), "dispatch_floor");
  const check::BenchSpec& bdpa = s.cases[5];
  EXPECT_EQ(bdpa.family, check::BenchFamily::bdpa);
  EXPECT_EQ(bdpa.name, "bdpa decode B2 S1 H8/2 D64 L300 f32/bf16 rope32 vocab40");  // Q and out from the defaults
  EXPECT_EQ(bdpa.bdpa.params.kv_capacity, 300u);
  EXPECT_EQ(bdpa.bdpa.params.start_pos[0], 299u);
  EXPECT_TRUE(bdpa.bdpa.params.causal);
  EXPECT_EQ(bdpa.bdpa.params.rotary_dim, 32u);
  EXPECT_EQ(bdpa.bdpa.vocab, 40u);
  EXPECT_EQ(bdpa.bdpa.basis, DType::bf16);
  EXPECT_EQ(bdpa.bdpa.out, DType::f32);
}

TEST(BenchSuite, ErrorsNameTheFileTheFieldAndTheValue) {
  EXPECT_THAT(error_of("{"), HasSubstr("suite t.json: (file): not valid JSON"));
  EXPECT_THAT(error_of(R"({"cases": []})"), HasSubstr("no cases"));
  EXPECT_THAT(error_of(R"({"case": []})"), HasSubstr("suite t.json: case: unknown key"));
  EXPECT_THAT(error_of(R"({"grids": [{"axes": {"batch": [1, "x"]}}]})"),
              HasSubstr("suite t.json: grids[0].axes.batch[1]: expected a positive integer, got \"x\""));
  EXPECT_THAT(error_of(R"({"grids": [{"axes": {"batch": [1, 0]}}]})"),
              HasSubstr("grids[0].axes.batch[1]: expected a positive integer, got 0"));
  EXPECT_THAT(error_of(R"({"grids": [{"axes": {"batch": []}}]})"),
              HasSubstr("grids[0].axes.batch: expected a non-empty list, got []"));
  EXPECT_THAT(error_of(R"({"grids": [{"axes": {"kv": [{"kv_head": 2}]}}]})"),
              HasSubstr("grids[0].axes.kv[0].kv_head: unknown field \"kv_head\""));
  EXPECT_THAT(error_of(R"({"cases": [{"heads": 4, "head_dim": 64, "causal": "yes"}]})"),
              HasSubstr("cases[0].causal: expected true or false, got \"yes\""));
  EXPECT_THAT(error_of(R"({"cases": [{"heads": 4, "head_dim": 64, "softcap": 1e300}]})"),
              HasSubstr("cases[0].softcap: expected a non-negative number in float range, got 1e+300"));
  EXPECT_THAT(error_of(R"({"cases": [{"head_dim": 64}]})"), HasSubstr("cases[0]: missing field \"heads\""));
  EXPECT_THAT(error_of(R"({"cases": [{"heads": 4, "head_dim": 64, "kv_dtype": "f8"}]})"),
              HasSubstr("cases[0].kv_dtype: expected f32, f16, bf16, i8 or i4, got \"f8\""));
  EXPECT_THAT(error_of(R"({"cases": [{"heads": 4, "head_dim": 64, "q_dtype": "i8"}]})"),
              HasSubstr("cases[0].q_dtype: expected f32, f16 or bf16, got \"i8\""));
  EXPECT_THAT(error_of(R"({"cases": [{"heads": 4, "head_dim": 64, "layout": "tiled"}]})"),
              HasSubstr("cases[0].layout: expected contiguous, ring, paged or tiered, got \"tiled\""));
  EXPECT_THAT(error_of(R"({"cases": [{"heads": 4, "head_dim": 64, "hot_window": 16}]})"),
              HasSubstr("cases[0].hot_window: applies to the tiered layout only, the layout is contiguous"));
  EXPECT_THAT(error_of(R"({"cases": [{"heads": 4, "head_dim": 64, "layout": "tiered", "kv_dtype": "f32"}]})"),
              HasSubstr("cases[0].kv_dtype: expected f16, bf16, i8 or i4 for the tiered layout's cold tier"));
  EXPECT_THAT(error_of(R"({"cases": [{"heads": 4, "head_dim": 64, "page_size": 16}]})"),
              HasSubstr("cases[0].page_size: applies to the paged layout only"));
  EXPECT_THAT(error_of(R"({"cases": [{"heads": 4, "head_dim": 64, "seq_len": 8, "kv_len": 4}]})"),
              HasSubstr("cases[0].kv_len: expected at least seq_len (8), got 4"));
  EXPECT_THAT(error_of(R"({"cases": [{"family": "vision", "patches": 4, "heads": 1, "head_dim": 8, "kv_len": 3}]})"),
              HasSubstr("cases[0].kv_len: does not apply to family vision"));
  EXPECT_THAT(error_of(R"({"cases": [{"family": "sound"}]})"),
              HasSubstr("cases[0].family: expected text, vision, audio, bdpa or probe, got \"sound\""));
  EXPECT_THAT(error_of(R"({"cases": [{"family": "bdpa", "heads": 4, "head_dim": 64, "rotary_dim": 65}]})"),
              HasSubstr("cases[0].rotary_dim: expected an even number at most head_dim (64), got 65"));
  EXPECT_THAT(error_of(R"({"cases": [{"family": "bdpa", "heads": 4, "head_dim": 64, "layout": "paged"}]})"),
              HasSubstr("cases[0].layout: does not apply to family bdpa"));
  EXPECT_THAT(error_of(R"({"cases": [{"heads": 4, "head_dim": 64}, {"heads": 4, "head_dim": 64}]})"),
              HasSubstr("cases[1]: duplicate case name \"decode B1 S1 H4/4 D64 L1 contiguous f16/f16\" (also cases[0])"));
}

TEST(BenchSuite, UnknownSuiteNameListsWhatWasFound) {
  const std::string msg = expect_error([] { check::find_bench_suite("no-such-suite"); }).what();
  EXPECT_THAT(msg, HasSubstr("no suite named \"no-such-suite\""));
  EXPECT_THAT(msg, HasSubstr("VKATTN_BENCH_SUITES"));
}

TEST(BenchSuite, SkipReasonsNameTheLimit) {
  DeviceCaps caps;
  caps.max_storage_buffer_range = 1ull << 30;
  caps.max_allocation_bytes = 4ull << 30;
  caps.device_local_bytes = 8ull << 30;
  // K: 64 x 32768 x 8 x 128 x 2 bytes = 4 GiB, above the 1 GiB range.
  check::TextCase big = check::make_text_bench_case(64, 1, 32, 8, 128, 32768, KvLayout::contiguous, 0);
  big.kv = DType::f16;
  EXPECT_EQ(check::text_skip_reason(caps, big),
            "K (and V) is 4.00 GiB, above the device's max_storage_buffer_range (1.00 GiB)");
  // K and V of 1 GiB each fit the range but not 90% of 2 GiB of device memory.
  caps.max_storage_buffer_range = 2ull << 30;
  caps.device_local_bytes = 2ull << 30;
  check::TextCase fits_range = check::make_text_bench_case(16, 1, 32, 8, 128, 32768, KvLayout::paged, 256);
  fits_range.kv = DType::f16;
  EXPECT_THAT(check::text_skip_reason(caps, fits_range),
              HasSubstr("needs 2.00 GiB of device memory, above 90% of the device's device_local_bytes"));
  caps.device_local_bytes = 64ull << 30;
  EXPECT_EQ(check::text_skip_reason(caps, fits_range), "");
}

class BenchGpu : public testing::GpuTest {};

TEST_F(BenchGpu, FillWritesThePatternInEveryDtype) {
  for (DType t : {DType::f32, DType::f16, DType::bf16}) {
    Tensor x = ctx().tensor(t, {1000});
    Recorder rec(ctx());
    check::record_fill(rec, x, 5);
    rec.run();
    std::vector<std::byte> bytes(x.bytes());
    ctx().download(x, bytes);
    const auto got = check::host::from_storage(t, bytes, 1000);
    int distinct = 0;
    for (uint32_t i = 0; i < 1000; ++i) {
      ASSERT_EQ(got[i], check::pattern_value(5, i)) << to_string(t) << " element " << i;
      distinct += i > 0 && got[i] != got[i - 1];
    }
    EXPECT_GT(distinct, 900) << "the pattern varies from element to element";
  }
}

TEST_F(BenchGpu, ReadProbeSumsEveryWord) {
  // 3 MiB + 48 bytes: a tail past the unrolled steps.
  const check::ProbeResult r = check::read_probe(ctx(), (3u << 20) + 48, 3);
  if (!ctx().caps().timestamps) GTEST_SKIP() << r.reason;
  EXPECT_TRUE(r.supported);
  EXPECT_TRUE(r.checked) << r.detail;
  EXPECT_EQ(r.bytes, double((3u << 20) + 48));
  EXPECT_GT(r.ms, 0.0);
  EXPECT_LE(r.min_ms, r.ms);
  EXPECT_GE(r.max_ms, r.ms);
}

TEST_F(BenchGpu, DispatchFloorProbeFillsItsWordsBackToBackAndAlone) {
  const check::ProbeResult r = check::dispatch_floor_probe(ctx(), 3);
  if (!ctx().caps().timestamps) GTEST_SKIP() << r.reason;
  EXPECT_TRUE(r.supported);
  EXPECT_TRUE(r.checked) << r.detail;
  EXPECT_EQ(r.name, "dispatch_floor");
  EXPECT_THAT(r.detail, ::testing::MatchesRegex(".*; alone in its recording [0-9]+\\.[0-9]+ ms"));
  EXPECT_GT(r.ms, 0.0);
  EXPECT_LE(r.min_ms, r.ms);
  EXPECT_GE(r.max_ms, r.ms);
}

TEST_F(BenchGpu, CoopmatProbeWhereSupported) {
  const check::ProbeResult r = check::coopmat_probe(ctx(), 8, 32, 3);
  if (!r.supported) {
    EXPECT_THAT(r.reason, HasSubstr("VK_NV_cooperative_matrix"));
    GTEST_SKIP() << r.reason;
  }
  EXPECT_TRUE(r.checked) << r.detail;
  EXPECT_EQ(r.flops, 2.0 * 16 * 16 * 16 * 8 * 32 * 8);
}

TEST_F(BenchGpu, TextRunnerChecksASampleOfLargeCasesAndAllOfSmallOnes) {
  check::BenchRunOptions o;
  o.runs = 2;
  o.max_run_ms = 60000;  // lavapipe on a loaded CI machine: this test is about parity, not the time limit
  // Small: every row.
  check::TextCase small = check::make_text_bench_case(3, 1, 8, 2, 64, 100, KvLayout::paged, 16);
  check::BenchRecord r = check::run_text_bench(ctx(), small, o);
  EXPECT_EQ(r.status, check::BenchStatus::ok) << r.reason;
  EXPECT_EQ(r.checked_rows, r.total_rows);
  EXPECT_EQ(r.total_rows, 3u * 8);
  EXPECT_TRUE(r.parity_passed) << r.rel_err;
  EXPECT_GT(r.timing.median_ms, 0.0);
  // Past the oracle budget (8 blocks of 8 heads x 40000 keys): sampled blocks only.
  check::TextCase big = check::make_text_bench_case(4, 1, 16, 2, 64, 40000, KvLayout::ring, 0);
  r = check::run_text_bench(ctx(), big, o);
  EXPECT_EQ(r.status, check::BenchStatus::ok) << r.reason;
  EXPECT_GT(r.checked_rows, 0u);
  EXPECT_LT(r.checked_rows, r.total_rows);
  EXPECT_TRUE(r.parity_passed) << r.rel_err;
}

TEST_F(BenchGpu, VisionRunnerChecksAsTheEquivalentTextCase) {
  check::BenchRunOptions o;
  o.runs = 2;
  o.max_run_ms = 20000;  // about a second a run on lavapipe: a loaded machine must not turn it into a skip
  check::VisionCase c;
  c.params.patches = 768;  // 2 heads x 768 x 768 keys: past the oracle budget, so sampled
  c.params.num_heads = 2;
  c.params.head_dim = 64;
  c.params.scale = 0.3f;
  c.dtype = c.out = DType::f16;
  const check::BenchRecord r = check::run_vision_bench(ctx(), c, o);
  EXPECT_EQ(r.status, check::BenchStatus::ok) << r.reason;
  EXPECT_GT(r.checked_rows, 0u);
  EXPECT_LT(r.checked_rows, r.total_rows);
  EXPECT_EQ(r.total_rows, 768u * 2);
  EXPECT_TRUE(r.parity_passed) << r.rel_err;
  EXPECT_EQ(r.flops, 4.0 * 768 * 768 * 2 * 64);
}

}  // namespace
}  // namespace vkattn

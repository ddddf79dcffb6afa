// The replay bench case (bench/suites/replay.json): a call recorded with host
// hints of `recorded_at` keys and the real lengths in GPU buffers, replayed at
// the real length, parity-checked like every bench case, on a lavapipe-sized shape.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "check/bench_run.hpp"
#include "check/bench_suite.hpp"
#include "test_context.hpp"
#include "vkattn/error.hpp"

namespace vkattn {
namespace {

using ::testing::HasSubstr;

class ReplayBench : public testing::GpuTest {};

TEST(ReplayBenchSuite, RecordedAtIsAShorterLength) {
  const auto s = check::parse_bench_suite(R"({"suite": "r", "defaults": {"heads": 4, "kv_heads": 1, "head_dim": 64},
      "cases": [{"kv_len": 3000, "recorded_at": 100}, {"kv_len": 3000}]})",
                                          "r.json");
  ASSERT_EQ(s.cases.size(), 2u);
  EXPECT_EQ(s.cases[0].text.recorded_at, 100u);
  EXPECT_THAT(s.cases[0].name, HasSubstr("recorded@100"));
  EXPECT_NE(s.cases[0].name, s.cases[1].name);
  try {
    check::parse_bench_suite(R"({"suite": "r", "cases": [{"heads": 4, "head_dim": 64, "kv_len": 30,
        "recorded_at": 31}]})",
                             "r.json");
    FAIL() << "recorded_at past kv_len was accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("cases[0].recorded_at: expected a length from seq_len (1) to kv_len (30), got 31"));
  }
  // The shipped suite parses and pairs each replay with a fresh recording.
  const auto shipped = check::find_bench_suite("replay");
  ASSERT_EQ(shipped.cases.size() % 2, 0u);
  for (size_t i = 0; i < shipped.cases.size(); i += 2) {
    EXPECT_EQ(shipped.cases[i].text.recorded_at, 1000u);
    EXPECT_EQ(shipped.cases[i + 1].text.recorded_at, 0u);
  }
}

TEST_F(ReplayBench, RecordedShortReplayedLongMatchesTheOracle) {
  check::BenchRunOptions o;
  o.runs = 2;
  o.max_run_ms = 60000;  // lavapipe on a loaded CI machine: this test is about parity
  check::TextCase c = check::make_text_bench_case(1, 1, 4, 1, 64, 6000, KvLayout::contiguous, 0);
  c.recorded_at = 100;
  const check::BenchRecord r = check::run_text_bench(ctx(), c, o);
  EXPECT_EQ(r.status, check::BenchStatus::ok) << r.reason;
  EXPECT_EQ(r.checked_rows, r.total_rows);
  EXPECT_TRUE(r.parity_passed) << r.rel_err;
}

}  // namespace
}  // namespace vkattn

// `vkattn bench` end to end on the CPU device: suites by name and by file,
// bad suite files, skip reasons, the table, --json and --csv shapes,
// command-line shapes, measured ceilings and planner overrides.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli_run.hpp"
#include "test_context.hpp"

namespace vkattn {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

std::vector<std::string> lines_starting(const std::string& s, const std::string& prefix) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(prefix, 0) == 0) out.push_back(line);
  return out;
}

std::vector<nlohmann::json> json_lines(const std::string& s) {
  std::vector<nlohmann::json> out;
  for (const auto& line : lines_starting(s, "{")) out.push_back(nlohmann::json::parse(line));
  return out;
}

// `vkattn bench ARGS` with no first-run limit: a CPU device shared with
// other tests can take seconds for a call it runs in milliseconds alone, and
// a case skipped for that would fail these tests for the machine's load.
Result bench(const std::string& args, bool stdout_only = false) {
  return run("bench " + args + " --max-run-ms 1e9", stdout_only);
}

class BenchCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("vkattn_bench_cli_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const std::string p = (dir_ / name).string();
    std::ofstream(p) << text;
    return p;
  }
  fs::path dir_;
};

// A small decode case in two layouts and a case no device holds (K: 128 GiB).
constexpr const char* kSuite = R"({"suite": "mine", "defaults": {"heads": 4, "kv_heads": 2, "head_dim": 64},
  "grids": [{"fields": {"batch": 2, "kv_len": 70},
             "axes": {"layout": [{"layout": "contiguous"}, {"layout": "paged", "page_size": 16}]}}],
  "cases": [{"batch": 64, "heads": 32, "kv_heads": 32, "head_dim": 256, "kv_len": 131072}]})";

TEST_F(BenchCli, SuiteByNameRunsEveryFamilyWithProgress) {
  const Result r = bench("--suite smoke --runs 2");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(lines_starting(r.output, "[").size(), 10u) << r.output;
  EXPECT_THAT(r.output, HasSubstr("[1/10] case decode B2 S1 H8/2 D64 L200 contiguous f16/f16"));
  for (const char* row : {"decode B2 S1 H8/2 D64 L200 paged ps16 f16/f16", "decode B2 S1 H8/2 D64 L200 ring f16/f16",
                          "prefill B1 S48 H4/2 D64 L48 contiguous f16/f16 w20", "vision P64 H2 D64 phd f16",
                          "audio T48 H2 D64 W12 P12 F0 f32", "bdpa decode B2 S1 H8/2 D64 L200 f16/f16 rope64 vocab50"}) {
    const std::string line = line_starting(r.output, row);
    // variant, median/min/max ms, GB/s, %bw, TFLOP/s, %peak and the parity error
    EXPECT_THAT(line, ::testing::MatchesRegex(".* [a-z0-9_]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ .* [0-9.]+e-[0-9]+$"))
        << "row " << row << " in\n" << r.output;
  }
  EXPECT_THAT(line_starting(r.output, "probe read_bandwidth 4 MiB"), HasSubstr("pass"));
  EXPECT_THAT(line_starting(r.output, "probe dispatch_floor"), HasSubstr("pass"));
  EXPECT_THAT(r.output, HasSubstr("ceilings (measured): "));  // the read probe ran first
}

TEST_F(BenchCli, SuiteByFileAsJsonLinesWithSkipReasons) {
  const std::string file = write("mine.json", kSuite);
  const Result r = bench("--suite " + file + " --runs 2 --json");
  ASSERT_EQ(r.status, 0) << r.output;
  const auto rows = json_lines(r.output);
  ASSERT_EQ(rows.size(), 4u) << r.output;
  EXPECT_EQ(rows[0]["case"], "decode B2 S1 H4/2 D64 L70 contiguous f16/f16");
  EXPECT_EQ(rows[1]["case"], "decode B2 S1 H4/2 D64 L70 paged ps16 f16/f16");
  for (int i : {0, 1}) {
    EXPECT_EQ(rows[i]["status"], "ok") << rows[i];
    EXPECT_EQ(rows[i]["suite"], "mine");
    EXPECT_EQ(rows[i]["parity"], "pass") << rows[i];
    EXPECT_EQ(rows[i]["checked_rows"], rows[i]["total_rows"]);
    EXPECT_GE(rows[i]["runs"].get<int>(), 2);  // calls timed back to back: at least --runs
    EXPECT_LE(rows[i]["min_ms"].get<double>(), rows[i]["ms"].get<double>());
    EXPECT_GE(rows[i]["max_ms"].get<double>(), rows[i]["ms"].get<double>());
    EXPECT_GT(rows[i]["gbps"].get<double>(), 0.0);
    EXPECT_EQ(rows[i]["kv_len"], 70);
    EXPECT_EQ(rows[i]["kv_heads"], 2);
    EXPECT_EQ(rows[i]["input_sets"], 8);  // a few KiB of K/V: the most sets a timed call rotates among
  }
  EXPECT_EQ(rows[1]["page_size"], 16);
  EXPECT_EQ(rows[2]["status"], "skipped");
  EXPECT_THAT(rows[2]["reason"].get<std::string>(), ::testing::MatchesRegex("K \\(and V\\) is 128.00 GiB, above the "
                                                                            "device's (max_storage_buffer_range|max_allocation_bytes) .*"));
  EXPECT_FALSE(rows[2].contains("ms"));
  EXPECT_TRUE(rows[3]["summary"].get<bool>());
  EXPECT_EQ(rows[3]["ok"], 2);
  EXPECT_EQ(rows[3]["skipped"], 1);
  EXPECT_EQ(rows[3]["failed"], 0);
}

TEST_F(BenchCli, SuiteByNameFromTheEnvironmentsDirectory) {
  write("mine.json", kSuite);
  const Result r = bench("--suite mine --filter contiguous --runs 1 --dry-run");
  EXPECT_NE(r.status, 0);  // not among the shipped suites
  EXPECT_THAT(r.output, HasSubstr("no suite named \"mine\""));
  EXPECT_THAT(r.output, HasSubstr("smoke"));  // it lists what it found
  setenv("VKATTN_BENCH_SUITES", dir_.c_str(), 1);
  const Result found = bench("--suite mine --dry-run");
  unsetenv("VKATTN_BENCH_SUITES");
  ASSERT_EQ(found.status, 0) << found.output;
  EXPECT_THAT(found.output, HasSubstr("suite mine: 3 cases"));
}

TEST_F(BenchCli, CsvHasAHeaderAndOneLinePerCase) {
  const std::string file = write("mine.json", kSuite);
  const Result r = bench("--suite " + file + " --runs 1 --csv");
  ASSERT_EQ(r.status, 0) << r.output;
  const auto header = lines_starting(r.output, "suite,case,family,status,");
  ASSERT_EQ(header.size(), 1u) << r.output;
  const auto rows = lines_starting(r.output, "mine,");
  ASSERT_EQ(rows.size(), 3u) << r.output;
  const auto columns = std::count(header[0].begin(), header[0].end(), ',');
  EXPECT_EQ(std::count(rows[0].begin(), rows[0].end(), ','), columns) << rows[0];
  EXPECT_THAT(rows[0], HasSubstr(",text,ok,"));
  EXPECT_THAT(rows[2], HasSubstr(",text,skipped,"));
  EXPECT_THAT(rows[2], HasSubstr(",\"K (and V) is 128.00 GiB, above"));  // a reason with a comma is quoted
}

TEST_F(BenchCli, BadSuiteFilesNameTheField) {
  const Result r = bench("--suite " +
                       write("bad.json", R"({"grids": [{"axes": {"batch": [1, -2]}}]})") + " --dry-run");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("bad.json: grids[0].axes.batch[1]: expected a positive integer, got -2"));
  const Result missing = bench("--suite " + (dir_ / "none.json").string());
  EXPECT_EQ(missing.status, 2);
  EXPECT_THAT(missing.output, HasSubstr("suite file: cannot read"));
  const Result unknown = bench("--suite " +
                             write("u.json", R"({"cases": [{"heads": 4, "head_dim": 64, "qdtype": "f16"}]})"));
  EXPECT_EQ(unknown.status, 2);
  EXPECT_THAT(unknown.output, HasSubstr("cases[0].qdtype: unknown field \"qdtype\""));
}

TEST_F(BenchCli, CommandLineShape) {
  const Result r = bench("--batch 2 --heads 4 --kv-heads 2 --head-dim 64 --kv-len 100 --layout paged "
                       "--page-size 16 --q-dtype f32 --kv-dtype f16 --runs 2 --json");
  ASSERT_EQ(r.status, 0) << r.output;
  const auto rows = json_lines(r.output);
  ASSERT_EQ(rows.size(), 2u) << r.output;
  EXPECT_EQ(rows[0]["case"], "decode B2 S1 H4/2 D64 L100 paged ps16 f32/f16");
  EXPECT_EQ(rows[0]["suite"], "command-line");
  EXPECT_EQ(rows[0]["parity"], "pass") << rows[0];
  const Result prefill = bench("--seq-len 40 --heads 2 --head-dim 64 --window 9 --no-causal --runs 1 --json");
  ASSERT_EQ(prefill.status, 0) << prefill.output;
  EXPECT_EQ(json_lines(prefill.output)[0]["case"], "prefill B1 S40 H2/2 D64 L40 contiguous f16/f16 noncausal w9");

  const Result both = bench("--suite smoke --heads 4 --head-dim 64");
  EXPECT_EQ(both.status, 2);
  EXPECT_THAT(both.output, HasSubstr("expected --suite or a command-line shape (--heads ...), got both"));
  const Result layout = bench("--heads 4 --head-dim 64 --layout tiled");
  EXPECT_EQ(layout.status, 2);
  EXPECT_THAT(layout.output, HasSubstr("command line: cases[0].layout: expected contiguous, ring, paged or tiered, got "
                                       "\"tiled\""));
}

TEST_F(BenchCli, PlannerOverridesReachThePlanner) {
  const std::string shape = "--heads 32 --kv-heads 8 --head-dim 128 --kv-len 1024 --q-dtype f32 --kv-dtype f16";
  const Result split = bench(shape + " --runs 2 --json --splits 3");
  ASSERT_EQ(split.status, 0) << split.output;
  EXPECT_EQ(json_lines(split.output)[0]["parity"], "pass") << split.output;
  const Result bad = bench(shape + " --runs 1 --variant decode_streaming_f16kv --splits 3");
  EXPECT_EQ(bad.status, 1);
  EXPECT_THAT(bad.output, HasSubstr("splits: expected 0 for the non-split variant decode_streaming_f16kv, got 3"));
}

TEST_F(BenchCli, MeasuredCeilingsFromAFile) {
  const std::string ceilings = write(
      "c.jsonl", R"({"family":"probe","status":"ok","probe":"read_bandwidth","gbps":200.0})" "\n"
                 R"({"family":"probe","status":"ok","probe":"coopmat_fp16","tflops":2.0})" "\n"
                 R"({"family":"probe","status":"ok","probe":"dispatch_floor","ms":0.01})" "\n");
  const Result r = bench("--heads 4 --head-dim 64 --kv-len 64 --runs 1 --json --ceilings " + ceilings);
  ASSERT_EQ(r.status, 0) << r.output;
  const auto rows = json_lines(r.output);
  EXPECT_EQ(rows[0]["ceilings"], "measured (" + ceilings + ")");
  EXPECT_DOUBLE_EQ(rows[0]["bw_share"].get<double>(), rows[0]["gbps"].get<double>() / 200.0);
  EXPECT_DOUBLE_EQ(rows[0]["peak_share"].get<double>(), rows[0]["tflops"].get<double>() / 2.0);
  const Result bad = bench("--heads 4 --head-dim 64 --ceilings " + write("x.jsonl", "{\"family\":\"text\"}\n"));
  EXPECT_EQ(bad.status, 2);
  EXPECT_THAT(bad.output, HasSubstr("expected probe rows with status ok"));
}

// --pipeline-stats: each case lists the pipelines its timed call bound, with
// the driver's statistics where the device offers them, else one line saying
// it does not (lavapipe of Mesa 22.3); the timings run either way.
TEST_F(BenchCli, PipelineStatsListTheBoundPipelines) {
  const bool offered = testing::shared_context().caps().pipeline_executable_info;
  const std::string shape = "--heads 4 --kv-heads 2 --head-dim 64 --kv-len 64 --runs 1 --pipeline-stats";
  const Result r = bench(shape + " --json");
  ASSERT_EQ(r.status, 0) << r.output;
  const auto rows = json_lines(r.output);
  ASSERT_EQ(rows.size(), 2u) << r.output;
  EXPECT_EQ(rows[0]["parity"], "pass") << rows[0];
  EXPECT_GE(rows[0]["runs"].get<int>(), 1) << rows[0];
  ASSERT_TRUE(rows[0].contains("pipelines")) << rows[0];
  ASSERT_FALSE(rows[0]["pipelines"].empty()) << rows[0];
  for (const auto& p : rows[0]["pipelines"]) {
    EXPECT_FALSE(p["module"].get<std::string>().empty()) << p;
    EXPECT_TRUE(p["spec"].is_array()) << p;
    EXPECT_EQ(p["statistics"].empty(), !offered) << p;
    for (const auto& s : p["statistics"]) {
      EXPECT_FALSE(s["name"].get<std::string>().empty()) << s;
      EXPECT_TRUE(s["value"].is_number() || s["value"].is_boolean()) << s;
    }
  }
  EXPECT_EQ(r.output.find("does not offer VK_KHR_pipeline_executable_properties") == std::string::npos, offered)
      << r.output;

  const Result table = bench(shape);
  ASSERT_EQ(table.status, 0) << table.output;
  EXPECT_EQ(lines_starting(table.output, "  pipeline ").size(), rows[0]["pipelines"].size()) << table.output;
  EXPECT_EQ(lines_starting(table.output, "    ").empty(), !offered) << table.output;
  // Cases recorded by the check kit (audio, head-major vision) list theirs too.
  const Result audio = bench("--suite smoke --filter audio --runs 1 --pipeline-stats --json");
  ASSERT_EQ(audio.status, 0) << audio.output;
  const auto audio_rows = json_lines(audio.output);
  ASSERT_TRUE(audio_rows[0].contains("pipelines")) << audio_rows[0];
  EXPECT_EQ(audio_rows[0]["pipelines"][0]["module"], "audio_attention") << audio_rows[0];
  const Result plain = bench("--heads 4 --kv-heads 2 --head-dim 64 --kv-len 64 --runs 1 --json");
  ASSERT_EQ(plain.status, 0) << plain.output;
  EXPECT_FALSE(json_lines(plain.output)[0].contains("pipelines"));
  EXPECT_EQ(bench(shape + " --dry-run").status, 2);
  EXPECT_EQ(bench(shape + " --csv").status, 2);
}

// A BDPA case: built, timed over copies of its cache, checked against the oracle.
TEST_F(BenchCli, BdpaCaseIsTimedOverCopiesAndChecked) {
  const Result r = bench("--suite smoke --filter bdpa --runs 2 --json");
  ASSERT_EQ(r.status, 0) << r.output;
  const auto rows = json_lines(r.output);
  ASSERT_EQ(rows.size(), 2u) << r.output;
  const auto& row = rows[0];
  EXPECT_EQ(row["family"], "bdpa") << row;
  EXPECT_EQ(row["status"], "ok") << row;
  EXPECT_THAT(row["variant"].get<std::string>(), ::testing::StartsWith("bdpa_")) << row;
  EXPECT_EQ(row["parity"], "pass") << row;
  EXPECT_EQ(row["checked_rows"], 2 * 8) << row;  // every (sequence, head) row
  EXPECT_EQ(row["input_sets"], 8) << row;         // a small cache: the most copies a timed call rotates among
  EXPECT_EQ(row["basis_dtype"], "f16") << row;
  EXPECT_EQ(row["rotary_dim"], 64) << row;
  EXPECT_GT(row["gbps"].get<double>(), 0.0) << row;
}

// Quantized K/V are filled through kv_append, timed, checked over the values
// the kernel reads, and counted with their scales: per key, K and V of 2 KV
// heads x D64 are 512 bytes in f16, 2 x 2 x (64 + 2) = 264 in int8, 2 x 2 x (32 + 2) = 136 in int4.
// Tiered caches too: the last 16 keys of each sequence from the f16 hot ring.
TEST_F(BenchCli, QuantizedCachesAreFilledTimedAndChecked) {
  const std::string file = write("quant.json", R"({"suite": "quant", "defaults": {"heads": 4, "kv_heads": 2,
    "head_dim": 64, "batch": 2, "kv_len": 70, "q_dtype": "f16"},
    "grids": [{"axes": {"kv_dtype": ["f16", "i8", "i4"],
                        "layout": [{"layout": "contiguous"}, {"layout": "paged", "page_size": 16}]}}],
    "cases": [{"layout": "tiered", "hot_window": 16, "kv_dtype": "i8"},
              {"layout": "tiered", "hot_window": 16, "cold_layout": "contiguous", "kv_dtype": "f16"}]})");
  const Result r = bench("--suite " + file + " --runs 2 --json");
  ASSERT_EQ(r.status, 0) << r.output;
  const auto rows = json_lines(r.output);
  ASSERT_EQ(rows.size(), 9u) << r.output;
  const double q_and_out = 2.0 * 2 * 4 * 64 * 2;  // Q and O, f16
  const double per_key[] = {512, 264, 136};
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(rows[i]["status"], "ok") << rows[i];
    EXPECT_EQ(rows[i]["parity"], "pass") << rows[i];
    EXPECT_EQ(rows[i]["checked_rows"], rows[i]["total_rows"]) << rows[i];
    EXPECT_DOUBLE_EQ(rows[i]["bytes"].get<double>(), 2 * 70 * per_key[i / 2] + q_and_out) << rows[i];
  }
  EXPECT_EQ(rows[2]["case"], "decode B2 S1 H4/2 D64 L70 contiguous f16/i8");
  EXPECT_EQ(rows[5]["case"], "decode B2 S1 H4/2 D64 L70 paged ps16 f16/i4");
  EXPECT_EQ(rows[6]["case"], "decode B2 S1 H4/2 D64 L70 tiered hot16 cold paged ps16 f16/i8");
  EXPECT_EQ(rows[7]["case"], "decode B2 S1 H4/2 D64 L70 tiered hot16 cold contiguous f16/f16");
  for (int i : {6, 7}) {
    EXPECT_EQ(rows[i]["status"], "ok") << rows[i];
    EXPECT_EQ(rows[i]["parity"], "pass") << rows[i];
    EXPECT_EQ(rows[i]["hot_window"], 16) << rows[i];
    EXPECT_DOUBLE_EQ(rows[i]["bytes"].get<double>(), 2 * (16 * 512 + 54 * per_key[i == 6 ? 1 : 0]) + q_and_out)
        << rows[i];
  }
  // The command line takes them too; bf16 Q with quantized K/V is refused by name.
  const Result cli = bench("--heads 4 --kv-heads 2 --head-dim 64 --kv-len 40 --kv-dtype i4 --layout paged --runs 1");
  ASSERT_EQ(cli.status, 0) << cli.output;
  EXPECT_THAT(line_starting(cli.output, "decode B1 S1 H4/2 D64 L40 paged ps16 f16/i4"),
              ::testing::MatchesRegex(".* decode_[a-z0-9_]+_i4kv +[0-9.]+ .* [0-9.]+e-[0-9]+$"))
      << cli.output;
  const Result bad = bench("--heads 4 --head-dim 64 --q-dtype bf16 --kv-dtype i8 --dry-run");
  EXPECT_EQ(bad.status, 2) << bad.output;
  EXPECT_THAT(bad.output, HasSubstr("q_dtype: expected f32 or f16 with kv_dtype i8, got bf16"));
  const Result odd = bench("--heads 4 --head-dim 64 --kv-dtype i3 --dry-run");
  EXPECT_THAT(odd.output, HasSubstr("expected f32, f16, bf16, i8 or i4, got \"i3\""));
}

// Every shipped suite loads; on the H200's caps the big decode cases are skipped with the limit named.
TEST_F(BenchCli, ShippedSuitesLoadAndH200SkipsAreExplained) {
  for (const char* s : {"models", "smoke", "decode", "decode-h200", "decode-sample", "decode-quant", "prefill",
                        "vision", "audio", "bdpa", "ceilings"}) {
    const Result r = bench("--dry-run --caps " + testing::caps_path("nvidia-h200.json") + " --suite " + s);
    EXPECT_EQ(r.status, 0) << s << ": " << r.output;
  }
  const Result decode = bench("--dry-run --json --caps " + testing::caps_path("nvidia-h200.json") +
                            " --suite decode");
  const auto rows = json_lines(decode.output);
  ASSERT_EQ(rows.size(), 4u * 3 * 3 * 4 * 3 + 1);
  EXPECT_EQ(rows.back()["device"], "NVIDIA H200");
  EXPECT_GT(rows.back()["ok"].get<int>(), 100);
  EXPECT_GT(rows.back()["skipped"].get<int>(), 0);
  EXPECT_THAT(decode.output, HasSubstr("above the device's max_allocation_bytes (4.00 GiB)"));
}
// The quantized decode suite fits the H200: nothing skipped.
TEST_F(BenchCli, DecodeQuantSuiteFitsTheH200) {
  const Result r = bench("--dry-run --json --caps " + testing::caps_path("nvidia-h200.json") +
                       " --suite decode-quant");
  const auto rows = json_lines(r.output);
  ASSERT_EQ(rows.size(), 3u * 3 * 3 + 1) << r.output;
  EXPECT_EQ(rows.back()["ok"], 27) << rows.back();
}

}  // namespace
}  // namespace vkattn

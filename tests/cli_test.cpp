// Smoke tests of the built `vkattn` binary: each runs a command (stdout and
// stderr together) and checks its exit status and what it printed or wrote.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "cli_run.hpp"
#include "io/npy.hpp"
#include "reference/kv_quant_reference.hpp"
#include "reference/rounding.hpp"
#include "reference/text_reference.hpp"
#include "reference/tolerance.hpp"
#include "test_paths.hpp"
#include "vkattn/version.hpp"
#include "vkattn/caps.hpp"

namespace vkattn {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("vkattn_cli_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // Random values, rounded to `t`, written as an .npy of that dtype.
  std::vector<float> write_float(const std::string& name, DType t, std::vector<uint64_t> shape, float scale) {
    uint64_t n = 1;
    for (auto d : shape) n *= d;
    std::normal_distribution<float> dist(0.0f, scale);
    std::vector<float> v(n);
    for (auto& x : v) x = reference::round_to(t, dist(rng_));
    io::NpyArray a;
    a.shape = std::move(shape);
    if (t == DType::f16) {
      a.descr = "<f2";
      a.data.resize(n * 2);
      for (uint64_t i = 0; i < n; ++i) {
        const uint16_t h = reference::float_to_f16(v[i]);
        std::memcpy(a.data.data() + 2 * i, &h, 2);
      }
    } else {
      a = io::npy_from_f32(v, a.shape);
    }
    io::write_npy(path(name), a);
    return v;
  }
  void write_i32(const std::string& name, const std::vector<int32_t>& v, std::vector<uint64_t> shape) {
    io::NpyArray a;
    a.descr = "<i4";
    a.shape = std::move(shape);
    a.data.resize(v.size() * 4);
    std::memcpy(a.data.data(), v.data(), a.data.size());
    io::write_npy(path(name), a);
  }
  void write_u32(const std::string& name, const std::vector<uint32_t>& v) {
    io::write_npy(path(name), io::npy_from_u32(v, {v.size()}));
  }

  // The CLI's output file against the oracle.
  void expect_matches_oracle(const std::string& out, const TextAttentionParams& p, const std::vector<float>& q,
                             const std::vector<float>& k, const std::vector<float>& v, DType qt, DType kt,
                             const std::vector<uint32_t>& table = {}) {
    const io::NpyArray o = io::read_npy(path(out));
    EXPECT_EQ(o.descr, qt == DType::f16 ? "<f2" : "<f4");
    EXPECT_EQ(o.shape, (std::vector<uint64_t>{p.batch, p.seq_len, p.num_heads, p.head_dim}));
    const auto tol = reference::tolerance_for(qt, kt, qt);
    const auto r = reference::compare(io::as_f32(o), reference::text_attention(p, q, k, v, table), tol);
    EXPECT_TRUE(r.passed) << reference::to_string(r, tol);
    EXPECT_GT(r.max_ref, 0.05);
  }

  fs::path dir_;
  std::mt19937 rng_{3};
};

TEST_F(Cli, Devices) {
  Result r = run("devices");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("device 0: "));
  EXPECT_THAT(r.output, HasSubstr("subgroups: size "));
  EXPECT_THAT(r.output, HasSubstr("cooperative matrix 2 (NV): "));
}

TEST_F(Cli, DevicesJsonIsTheCapsFormat) {
  Result r = run("devices --json");
  ASSERT_EQ(r.status, 0) << r.output;
  nlohmann::json j = nlohmann::json::parse(r.output);  // nothing but JSON on the output
  ASSERT_TRUE(j.is_array());
  ASSERT_FALSE(j.empty());
  for (size_t i = 0; i < j.size(); ++i) {
    EXPECT_EQ(j[i].at("index"), i);
    const DeviceCaps c = caps_from_json(j[i].dump());
    EXPECT_FALSE(c.name.empty());
    EXPECT_GE(c.max_shared_memory_bytes, 16384u);
  }
  // The array is a caps file for `plan --caps`.
  std::ofstream(path("devices.json")) << r.output;
  Result plan = run("plan text --caps " + path("devices.json") + " --json");
  ASSERT_EQ(plan.status, 0) << plan.output;
  EXPECT_EQ(load_caps_file(path("devices.json")).name, j[0].at("name").get<std::string>());
  EXPECT_THAT(nlohmann::json::parse(plan.output).at("variant").get<std::string>(), ::testing::StartsWith("decode_"));
}

TEST_F(Cli, PlanForNvidiaFromCapsFile) {
  Result r = run("plan text --caps " + testing::caps_path("nvidia-h200.json") + " --json");
  ASSERT_EQ(r.status, 0) << r.output;
  auto j = nlohmann::json::parse(r.output);
  // Llama-3-8B decode (the defaults: B1 H32/8 D128 L4096, f32 Q, f16 KV) underfills 132 SMs: split-KV,
  // the query heads of a KV head on the tensor cores (f32 Q in two f16 parts).
  EXPECT_EQ(j.at("variant").get<std::string>(), "decode_stream_coopmat_f16kv");
  EXPECT_THAT(j.at("reason").get<std::string>(), ::testing::StartsWith("tensor_core_stream"));
  EXPECT_GE(j.at("geometry").at("splits").get<int>(), 2);
  bool has_split = false;
  for (const auto& c : j.at("candidates")) has_split |= c.at("variant") == "decode_split_f16kv";
  EXPECT_TRUE(has_split) << r.output;
  // The text form names the device and the winner.
  Result text = run("plan text --caps " + testing::caps_path("nvidia-h200.json"));
  EXPECT_EQ(text.status, 0);
  EXPECT_THAT(text.output, HasSubstr("device: NVIDIA H200"));
  EXPECT_THAT(text.output, HasSubstr("chosen: " + j.at("variant").get<std::string>()));
}

// The tensor-core prefill on the H200, and the opt-in that lets f32 Q use it.
TEST_F(Cli, PlanTensorCorePrefillForNvidia) {
  const std::string base = "plan text --caps " + testing::caps_path("nvidia-h200.json") +
                           " --seq-len 4096 --kv-len 4096 --heads 32 --kv-heads 8 --head-dim 128 --kv-dtype f16";
  Result f16 = run(base + " --q-dtype f16");
  ASSERT_EQ(f16.status, 0) << f16.output;
  EXPECT_THAT(f16.output, HasSubstr("chosen: prefill_flash_coopmat_f16 (tensor_cores"));
  Result f32 = run(base + " --q-dtype f32");
  EXPECT_THAT(f32.output, HasSubstr("rounds f32 Q to f16; needs allow_reduced_precision"));
  EXPECT_THAT(f32.output, ::testing::Not(HasSubstr("chosen: prefill_flash")));
  Result allowed = run(base + " --q-dtype f32 --reduced-precision");
  EXPECT_THAT(allowed.output, HasSubstr("chosen: prefill_flash_coopmat_f16kv"));
  EXPECT_THAT(allowed.output, HasSubstr("Q rounded to f16 (allow_reduced_precision)"));
}

TEST_F(Cli, PlanStrictUnknownVariantFails) {
  Result r = run("plan text --caps " + testing::caps_path("lavapipe.json") + " --variant nosuch --strict");
  EXPECT_NE(r.status, 0);
  EXPECT_THAT(r.output, HasSubstr("vkattn: error: variant: expected a text variant name"));
  EXPECT_THAT(r.output, HasSubstr("'nosuch'"));
  // Non-strict: a warning and the capability choice.
  Result soft = run("plan text --caps " + testing::caps_path("lavapipe.json") + " --variant nosuch");
  EXPECT_EQ(soft.status, 0) << soft.output;
  EXPECT_THAT(soft.output, HasSubstr("override_fallback"));
  // A shape the planner cannot divide is an error, not a crash.
  Result zero = run("plan text --caps " + testing::caps_path("lavapipe.json") + " --kv-heads 0");
  EXPECT_EQ(zero.status, 2) << zero.output;
  EXPECT_THAT(zero.output, HasSubstr("num_kv_heads: expected >= 1, got 0"));
}

TEST_F(Cli, CheckFilterOneCase) {
  Result r = run("check --filter \"decode_split_f32 contiguous\"");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(last_line(r.output), "1 passed, 0 failed") << r.output;
  EXPECT_THAT(r.output, HasSubstr("PASS decode_split_f32 contiguous"));
  EXPECT_THAT(r.output, ::testing::Not(HasSubstr("validation:")));
}

TEST_F(Cli, RunTextContiguousF16WithLengthsFile) {
  // Decode, f16 in and out, per-sequence lengths from an .npy.
  auto q = write_float("q.npy", DType::f16, {2, 1, 8, 64}, 2.0f);
  auto k = write_float("k.npy", DType::f16, {2, 24, 2, 64}, 1.0f);
  auto v = write_float("v.npy", DType::f16, {2, 24, 2, 64}, 1.0f);
  write_u32("lens.npy", {24, 11});
  Result r = run("run text --q " + path("q.npy") + " --k " + path("k.npy") + " --v " + path("v.npy") + " --out " +
                 path("o.npy") + " --kv-len " + path("lens.npy") + " --causal --check --device cpu");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(line_starting(r.output, "variant: "), ::testing::MatchesRegex("variant: decode_.*_f16 \\(.+\\)"));
  EXPECT_THAT(r.output, HasSubstr("max relative error vs float64 oracle"));
  EXPECT_THAT(r.output, HasSubstr("PASS"));
  EXPECT_THAT(r.output, ::testing::Not(HasSubstr("validation:")));
  TextAttentionParams p;
  p.batch = 2;
  p.num_heads = 8;
  p.num_kv_heads = 2;
  p.head_dim = 64;
  p.kv_capacity = 24;
  p.kv_len = {24, 11};
  p.start_pos = {23, 10};  // default: the last positions
  p.causal = true;
  expect_matches_oracle("o.npy", p, q, k, v, DType::f16, DType::f16);
}

TEST_F(Cli, RunTextPagedPrefill) {
  auto q = write_float("q.npy", DType::f32, {2, 5, 4, 32}, 1.5f);
  auto k = write_float("k.npy", DType::f32, {7, 4, 2, 32}, 1.0f);
  auto v = write_float("v.npy", DType::f32, {7, 4, 2, 32}, 1.0f);
  const std::vector<int32_t> table{6, 0, 3, 1, 5, 4, 2, 2};
  write_i32("table.npy", table, {2, 4});
  write_u32("lens.npy", {14, 9});
  Result r = run("run text --q " + path("q.npy") + " --k " + path("k.npy") + " --v " + path("v.npy") + " --out " +
                 path("o.npy") + " --layout paged --page-table " + path("table.npy") + " --page-size 4 --kv-len " +
                 path("lens.npy") + " --kv-start 1 --causal --softcap 20 --check");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(line_starting(r.output, "variant: "), HasSubstr("prefill_"));
  TextAttentionParams p;
  p.batch = 2;
  p.seq_len = 5;
  p.num_heads = 4;
  p.num_kv_heads = 2;
  p.head_dim = 32;
  p.layout = KvLayout::paged;
  p.kv_capacity = 4;
  p.num_pages = 7;
  p.max_pages = 4;
  p.kv_len = {14, 9};
  p.kv_start = {1};
  p.start_pos = {10, 5};  // kv_start + kv_len - S
  p.causal = true;
  p.softcap = 20.0f;
  expect_matches_oracle("o.npy", p, q, k, v, DType::f32, DType::f32,
                        std::vector<uint32_t>(table.begin(), table.end()));
}

TEST_F(Cli, RunTextTieredPagedCold) {
  // Decode over a tiered cache: the last 6 keys from the f16 hot ring, the
  // rest from a paged f16 cold tier.
  auto q = write_float("q.npy", DType::f32, {2, 1, 4, 64}, 2.0f);
  auto k = write_float("k.npy", DType::f16, {8, 8, 2, 64}, 1.0f);
  auto v = write_float("v.npy", DType::f16, {8, 8, 2, 64}, 1.0f);
  auto hot_k = write_float("hk.npy", DType::f16, {2, 6, 2, 64}, 1.5f);
  auto hot_v = write_float("hv.npy", DType::f16, {2, 6, 2, 64}, 1.5f);
  const std::vector<int32_t> table{7, 1, 4, 0, 2, 6, 3, 5};
  write_i32("table.npy", table, {2, 4});
  write_u32("lens.npy", {29, 4});
  Result r = run("run text --q " + path("q.npy") + " --k " + path("k.npy") + " --v " + path("v.npy") + " --out " +
                 path("o.npy") + " --layout tiered --cold-layout paged --page-table " + path("table.npy") +
                 " --hot-k " + path("hk.npy") + " --hot-v " + path("hv.npy") + " --kv-len " + path("lens.npy") +
                 " --causal --check");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("PASS"));
  TextAttentionParams p;
  p.batch = 2;
  p.num_heads = 4;
  p.num_kv_heads = 2;
  p.head_dim = 64;
  p.layout = KvLayout::tiered;
  p.cold_layout = KvLayout::paged;
  p.hot_window = 6;
  p.kv_capacity = 8;
  p.num_pages = 8;
  p.max_pages = 4;
  p.kv_len = {29, 4};
  p.start_pos = {28, 3};
  p.causal = true;
  const io::NpyArray o = io::read_npy(path("o.npy"));
  const auto tol = reference::tolerance_for(DType::f32, DType::f16, DType::f32);
  const auto want =
      reference::text_attention(p, q, k, v, std::vector<uint32_t>(table.begin(), table.end()), hot_k, hot_v);
  const auto cmp = reference::compare(io::as_f32(o), want, tol);
  EXPECT_TRUE(cmp.passed) << reference::to_string(cmp, tol);
  // Without the hot ring the same files are an error naming it.
  Result bad = run("run text --q " + path("q.npy") + " --k " + path("k.npy") + " --v " + path("v.npy") + " --out " +
                   path("o.npy") + " --layout tiered --cold-layout paged --page-table " + path("table.npy"));
  EXPECT_EQ(bad.status, 2);
  EXPECT_THAT(bad.output, HasSubstr("hot_k: expected --hot-k and --hot-v both for --layout tiered"));
}

TEST_F(Cli, RunTextRingWindowForcedVariant) {
  auto q = write_float("q.npy", DType::f32, {1, 3, 2, 64}, 2.0f);
  auto k = write_float("k.npy", DType::f16, {1, 16, 1, 64}, 1.0f);
  auto v = write_float("v.npy", DType::f16, {1, 16, 1, 64}, 1.0f);
  Result r = run("run text --q " + path("q.npy") + " --k " + path("k.npy") + " --v " + path("v.npy") + " --out " +
                 path("o.npy") + " --layout ring --kv-start 37 --window 6 --causal --scale 0.2 --variant "
                 "prefill_streaming_f16kv --strict --check");
  ASSERT_EQ(r.status, 0) << r.output;
  // Three query rows: the adaptive swap may replace streaming by a tiled prefill.
  EXPECT_THAT(line_starting(r.output, "variant: "), ::testing::MatchesRegex("variant: prefill_.*_f16kv \\(override.*"));
  TextAttentionParams p;
  p.seq_len = 3;
  p.num_heads = 2;
  p.num_kv_heads = 1;
  p.head_dim = 64;
  p.layout = KvLayout::ring;
  p.kv_capacity = 16;
  p.kv_len = {16};
  p.kv_start = {37};
  p.start_pos = {50};
  p.window = 6;
  p.causal = true;
  p.scale = 0.2f;
  expect_matches_oracle("o.npy", p, q, k, v, DType::f32, DType::f16);
}

TEST_F(Cli, RunTextBadInputs) {
  write_float("q.npy", DType::f32, {1, 1, 4, 32}, 1.0f);
  write_float("k.npy", DType::f32, {3, 4, 2, 32}, 1.0f);
  write_i32("table.npy", {0, 1, 3, 2}, {1, 4});
  const std::string io = "run text --q " + path("q.npy") + " --k " + path("k.npy") + " --v " + path("k.npy") +
                         " --out " + path("o.npy");
  Result range = run(io + " --layout paged --page-table " + path("table.npy"));
  EXPECT_EQ(range.status, 2) << range.output;
  EXPECT_THAT(range.output, HasSubstr("page_table[0][2]: expected a page index below num_pages (3), got 3"));
  Result none = run(io + " --layout paged");
  EXPECT_EQ(none.status, 2);
  EXPECT_THAT(none.output, HasSubstr("page_table: expected --page-table"));
  Result size = run(io + " --layout paged --page-table " + path("table.npy") + " --page-size 8");
  EXPECT_THAT(size.output, HasSubstr("page_size: expected 4"));
  Result batch = run(io);  // k's batch 3 != q's 1
  EXPECT_EQ(batch.status, 2);
  EXPECT_THAT(batch.output, HasSubstr("k: expected batch 1"));
  Result len = run(io + " --layout paged --page-table " + path("table.npy") + " --kv-len 8");
  EXPECT_EQ(len.status, 0) << len.output;  // pages 0 and 1 only: entry 2 is never read
  Result word = run(io + " --layout paged --page-table " + path("table.npy") + " --kv-len many");
  EXPECT_THAT(word.output, HasSubstr("--kv-len: expected a non-negative integer or an .npy file, got 'many'"));
}

TEST_F(Cli, HostileArgumentsFailClearly) {
  // A filter that matches nothing checked nothing: not a success.
  Result none = run("check --filter no-such-case");
  EXPECT_EQ(none.status, 2) << none.output;  // bad input
  EXPECT_THAT(none.output, HasSubstr("--filter: expected a text that matches at least one text case, got 'no-such-case'"));
  const std::string caps = " --caps " + testing::caps_path("lavapipe.json");
  Result patches = run("plan vision --patches 0" + caps);
  EXPECT_EQ(patches.status, 2) << patches.output;
  EXPECT_THAT(patches.output, HasSubstr("patches: expected >= 1, got 0"));
  Result heads = run("plan vision --heads 0" + caps);
  EXPECT_EQ(heads.status, 2) << heads.output;
  EXPECT_THAT(heads.output, HasSubstr("num_heads: expected >= 1, got 0"));
  Result zero_caps = run("plan text --caps /dev/zero");
  EXPECT_NE(zero_caps.status, 0);
  EXPECT_THAT(zero_caps.output, HasSubstr("expected a regular file, got a character device"));
  // 65537 pages of 65536 keys: the default length (2^32 + 65536) does not fit 32 bits.
  write_float("q.npy", DType::f32, {1, 1, 1, 8}, 1.0f);
  write_float("k.npy", DType::f32, {1, 65536, 1, 8}, 1.0f);
  write_u32("table.npy", std::vector<uint32_t>(65537, 0));
  io::NpyArray table = io::read_npy(path("table.npy"));
  table.shape = {1, 65537};
  io::write_npy(path("table.npy"), table);
  Result paged = run("run text --q " + path("q.npy") + " --k " + path("k.npy") + " --v " + path("k.npy") + " --out " +
                     path("o.npy") + " --layout paged --page-table " + path("table.npy"));
  EXPECT_EQ(paged.status, 2) << paged.output;
  EXPECT_THAT(paged.output, HasSubstr("kv_len: expected the default (cache slots 4295032832 - kv_start 0) below 2^32"));
  EXPECT_FALSE(fs::exists(path("o.npy")));
}

TEST_F(Cli, UnknownDeviceFailsClearly) {
  Result r = run("check --filter nothing --device no-such-gpu-xyz");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("vkattn: error: device: expected"));
  EXPECT_THAT(r.output, HasSubstr("got 'no-such-gpu-xyz'"));
  Result before = run("--device 99 check --filter nothing");
  EXPECT_EQ(before.status, 2) << before.output;
  EXPECT_THAT(before.output, HasSubstr("expected an index below"));
}

}  // namespace
}  // namespace vkattn

namespace vkattn {
namespace {

// Without a Vulkan loader the CLI starts and names the package to install.
TEST(CliLoader, MissingLoaderNamesThePackage) {
  setenv("VKATTN_VULKAN_LIBRARY", "/nonexistent/libvulkan.so.1", 1);
  Result r = run("devices");
  unsetenv("VKATTN_VULKAN_LIBRARY");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("vkattn: error: Vulkan loader: expected /nonexistent/libvulkan.so.1 to load"));
  EXPECT_THAT(r.output, HasSubstr("install the Debian package libvulkan1"));
}

}  // namespace
}  // namespace vkattn

namespace vkattn {
namespace {

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t end = s.find('\n', pos);
    if (end == std::string::npos) end = s.size();
    out.push_back(s.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

// The conventions every command follows (README, "The CLI").
TEST(CliConventions, VersionAndUsageExitCodes) {
  Result v = run("--version");
  EXPECT_EQ(v.status, 0) << v.output;
  EXPECT_EQ(last_line(v.output), std::string(VKATTN_VERSION_STRING));
  // CLI11's own errors are usage errors: exit status 2, like bad input.
  Result unknown = run("check --no-such-flag");
  EXPECT_EQ(unknown.status, 2) << unknown.output;
  Result missing = run("plan");
  EXPECT_EQ(missing.status, 2) << missing.output;
  Result range = run("demo --runs 0");
  EXPECT_EQ(range.status, 2) << range.output;
  Result help = run("--help");
  EXPECT_EQ(help.status, 0) << help.output;
  EXPECT_THAT(help.output, HasSubstr("Exit status: 0 success, 1 a parity check failed, 2 bad usage or input"));
}

TEST(CliConventions, EverySubcommandShowsDevice) {
  for (const char* cmd : {"devices", "demo", "check", "bench", "plan", "plan text", "plan vision", "run", "run text",
                          "run vision", "run posembed", "run audio"}) {
    Result r = run(std::string(cmd) + " --help");
    EXPECT_EQ(r.status, 0) << cmd << ": " << r.output;
    EXPECT_THAT(r.output, HasSubstr("--device")) << cmd;
  }
}

TEST(CliConventions, PlanTextShowsDefaultsAndLegend) {
  Result help = run("plan text --help");
  EXPECT_THAT(help.output, HasSubstr("--kv-len UINT=4096 ")) << help.output;
  EXPECT_THAT(help.output, HasSubstr("--kv-dtype TEXT=f16 ")) << help.output;
  Result plan = run("plan text --caps " + testing::caps_path("lavapipe.json"));
  EXPECT_EQ(plan.status, 0) << plan.output;
  EXPECT_THAT(plan.output, HasSubstr("legend: * chosen, + eligible, - rejected"));
}

// --json output is JSON lines: every stdout line parses, the summary is an object;
// progress goes to stderr.
TEST(CliConventions, JsonOutputIsJsonLinesAndProgressIsOnStderr) {
  Result check = run("check --json --filter \"decode_split_f32 contiguous\"", true);
  EXPECT_EQ(check.status, 0) << check.output;
  const auto lines = lines_of(check.output);
  ASSERT_EQ(lines.size(), 2u) << check.output;
  for (const auto& l : lines) EXPECT_NO_THROW(nlohmann::json::parse(l)) << l;
  EXPECT_EQ(nlohmann::json::parse(lines[1]), (nlohmann::json{{"passed", 1}, {"failed", 0}}));
  for (const std::string& cmd : std::vector<std::string>{"devices --json",
                                 "plan text --json --caps " + testing::caps_path("lavapipe.json")}) {
    Result r = run(cmd, true);
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_EQ(lines_of(r.output).size(), 1u) << cmd << ": " << r.output;
    EXPECT_NO_THROW(nlohmann::json::parse(r.output)) << r.output;
  }
  Result progress = run("check --filter \"decode_split_f32 contiguous\"");
  EXPECT_THAT(progress.output, HasSubstr("[1/1] case decode_split_f32 contiguous"));
}


TEST_F(Cli, RunTextOverAQuantizedCache) {
  // Paged int4 with a scale per 32 elements and contiguous int8: both checks printed and passed.
  write_float("q.npy", DType::f32, {2, 3, 4, 64}, 1.5f);
  write_float("k.npy", DType::f32, {7, 4, 2, 64}, 1.0f);
  write_float("v.npy", DType::f32, {7, 4, 2, 64}, 1.0f);
  write_i32("table.npy", {6, 0, 3, 1, 5, 4, 2, 2}, {2, 4});
  Result r = run("run text --q " + path("q.npy") + " --k " + path("k.npy") + " --v " + path("v.npy") + " --out " +
                 path("o.npy") + " --layout paged --page-table " + path("table.npy") +
                 " --kv-len 13 --causal --kv-dtype i4 --quant-group 32 --check");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(line_starting(r.output, "variant: "), HasSubstr("_i4kv"));
  EXPECT_THAT(line_starting(r.output, "max relative error vs float64 oracle over the dequantized cache"), HasSubstr("PASS"));
  EXPECT_THAT(line_starting(r.output, "max error vs float64 oracle over the original K/V"), HasSubstr("PASS"));
  write_float("k.npy", DType::f16, {2, 16, 2, 64}, 1.0f);
  write_float("v.npy", DType::f16, {2, 16, 2, 64}, 1.0f);
  write_float("q.npy", DType::f32, {2, 1, 4, 64}, 1.5f);
  r = run("run text --q " + path("q.npy") + " --k " + path("k.npy") + " --v " + path("v.npy") + " --out " +
          path("o.npy") + " --causal --kv-dtype i8 --check");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(line_starting(r.output, "variant: "), HasSubstr("_i8kv"));
  EXPECT_EQ(run("run text --q q.npy --k k.npy --v v.npy --out o.npy --kv-dtype i2").status, 2);
}


TEST_F(Cli, RunTextOverAPackedCacheFromElsewhere) {
  // doppler's format on disk: u32 words [B, C, Hkv, ceil(D/4)] and f16 scales [B, C, Hkv].
  auto q = write_float("q.npy", DType::f32, {1, 1, 4, 64}, 1.5f);
  std::vector<float> k = write_float("kf.npy", DType::f32, {1, 12, 2, 64}, 1.0f);
  std::vector<float> v = write_float("vf.npy", DType::f32, {1, 12, 2, 64}, 1.0f);
  auto write_packed = [&](const std::string& stem, const std::vector<float>& x, uint64_t words_per_row) {
    const auto packed = reference::quantize_rows(DType::i8, 0, 64, x);
    std::vector<uint32_t> words;
    for (size_t r = 0; r < 24; ++r)
      for (uint64_t w = 0; w < words_per_row; ++w) words.push_back(w < 16 ? packed.words[r * 16 + w] : 0u);
    io::write_npy(path(stem + "w.npy"), io::npy_from_u32(words, {1, 12, 2, words_per_row}));
    io::NpyArray scales;
    scales.descr = "<f2";
    scales.shape = {1, 12, 2};
    scales.data.resize(packed.scales.size() * 2);
    std::memcpy(scales.data.data(), packed.scales.data(), scales.data.size());
    io::write_npy(path(stem + "s.npy"), scales);
    return reference::dequantize_rows(DType::i8, 0, 64, packed.words, packed.scales);
  };
  const std::vector<float> kd = write_packed("k", k, 16), vd = write_packed("v", v, 16);
  const std::string args = "run text --q " + path("q.npy") + " --k " + path("kw.npy") + " --v " + path("vw.npy") +
                           " --k-scale " + path("ks.npy") + " --v-scale " + path("vs.npy") + " --out " + path("o.npy") +
                           " --kv-dtype i8 --causal --check";
  Result r = run(args);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("over the dequantized cache"));
  TextAttentionParams p;
  p.num_heads = 4;
  p.num_kv_heads = 2;
  p.head_dim = 64;
  p.kv_capacity = 12;
  p.kv_len = {12};
  p.start_pos = {11};
  p.causal = true;
  expect_matches_oracle("o.npy", p, q, kd, vd, DType::f32, DType::f32);
  // A packed stride for D = 32 under 64-element queries.
  write_packed("k", k, 8);
  write_packed("v", v, 8);
  r = run(args);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("k: expected packed_stride ceil(head_dim / 4) = 16 u32 words"));
}

}  // namespace
}  // namespace vkattn

namespace vkattn {
namespace {

TEST_F(Cli, RunBdpaBuildsOnTheGpuAndChecksBothWays) {
  write_float("q.npy", DType::f32, {1, 4, 4, 64}, 1.0f);
  write_float("k.npy", DType::f16, {1, 40, 2, 64}, 1.0f);
  write_float("v.npy", DType::f16, {1, 40, 2, 64}, 1.0f);
  std::vector<int32_t> tokens(40);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = int32_t(i % 5 * 3);  // 5 distinct ids below 13
  write_i32("t.npy", tokens, {1, 40});
  const std::string io = "run bdpa --q " + path("q.npy") + " --k " + path("k.npy") + " --v " + path("v.npy") +
                         " --out " + path("o.npy") + " --device cpu ";
  Result r = run(io + "--tokens " + path("t.npy") + " --causal --rope interleaved --rotary-dim 32 --check");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("variant: bdpa_prefill_tiled_f16kv"));
  EXPECT_THAT(r.output, HasSubstr("basis rows: 5 for 40 slots"));
  EXPECT_THAT(line_starting(r.output, "exact path"), HasSubstr("PASS"));
  EXPECT_THAT(line_starting(r.output, "end to end"), HasSubstr("PASS"));
  EXPECT_THAT(r.output, ::testing::Not(HasSubstr("validation:")));
  write_i32("short.npy", tokens, {2, 20});
  Result wrong = run(io + "--tokens " + path("short.npy"));
  EXPECT_EQ(wrong.status, 2) << wrong.output;
  EXPECT_THAT(wrong.output, HasSubstr("tokens: expected shape [1, 40], got [2, 20]"));
  Result plan = run("plan bdpa --caps " + testing::caps_path("nvidia-h200.json") + " --kv-len 32768");
  EXPECT_EQ(plan.status, 0) << plan.output;
  EXPECT_THAT(plan.output, HasSubstr("chosen: bdpa_decode_split_f16kv"));
  EXPECT_THAT(plan.output, HasSubstr("splits 256"));
  Result past = run(io + "--tokens " + path("t.npy") + " --vocab 12");
  EXPECT_EQ(past.status, 2) << past.output;
  EXPECT_THAT(past.output, HasSubstr("tokens: expected ids below --vocab (12), got 12 at [0][4]"));
  Result odd = run(io + "--tokens " + path("t.npy") + " --rotary-dim 7");
  EXPECT_EQ(odd.status, 2) << odd.output;
  EXPECT_THAT(odd.output, HasSubstr("rotary_dim: expected an even number <= head_dim (64), got 7"));
}

}  // namespace
}  // namespace vkattn

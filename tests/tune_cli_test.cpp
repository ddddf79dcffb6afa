// `vkattn tune` on one-case suites (fast on lavapipe): it writes the tuning
// cache, and `vkattn plan` then says that a tuned entry decided.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_run.hpp"

namespace vkattn {
namespace {

using ::testing::HasSubstr;

// A folder of the test's own holding a one-case suite, with $VKATTN_TUNE_CACHE
// pointing into it (a folder `vkattn tune` creates) until the test ends.
class TuneCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("vkattn-tune-cli-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    cache_ = (dir_ / "cache" / "tune.json").string();
    suite_ = (dir_ / "tiny.json").string();
    const char* before = std::getenv("VKATTN_TUNE_CACHE");
    had_ = before != nullptr;
    if (had_) saved_ = before;
    setenv("VKATTN_TUNE_CACHE", cache_.c_str(), 1);
  }
  void TearDown() override {
    if (had_) setenv("VKATTN_TUNE_CACHE", saved_.c_str(), 1);
    else unsetenv("VKATTN_TUNE_CACHE");
    std::filesystem::remove_all(dir_);
  }
  std::filesystem::path dir_;
  std::string cache_, suite_, saved_;
  bool had_ = false;
};

TEST_F(TuneCli, WritesTheCacheAndThePlannerUsesIt) {
  const std::string& cache = cache_;
  const std::string& suite = suite_;
  std::ofstream(suite) << R"({"suite": "tiny", "cases": [{"heads": 4, "kv_heads": 1, "head_dim": 64, "kv_len": 300,
                            "q_dtype": "f32", "kv_dtype": "f32"}]})";

  Result tune = run("tune --suite " + suite + " --runs 2 --json", true);
  ASSERT_EQ(tune.status, 0) << tune.output;
  const auto line = nlohmann::json::parse(last_line(tune.output));
  EXPECT_EQ(line.at("skipped"), "") << tune.output;
  EXPECT_GE(line.at("tried").get<int>(), 2) << tune.output;
  const std::string variant = line.at("variant");
  EXPECT_THAT(variant, ::testing::StartsWith("decode_"));
  ASSERT_TRUE(std::filesystem::exists(cache));
  const auto file = nlohmann::json::parse(std::ifstream(cache));
  ASSERT_EQ(file.at("entries").size(), 1u);
  EXPECT_EQ(file["entries"][0].at("variant"), variant);

  const std::string shape = "plan text --seq-len 1 --heads 4 --kv-heads 1 --head-dim 64 --kv-len 300 --q-dtype f32 "
                            "--kv-dtype f32";
  Result plan = run(shape + " --explain");
  EXPECT_EQ(plan.status, 0) << plan.output;
  EXPECT_THAT(plan.output, HasSubstr("chosen: " + variant + " (tuned: "));
  EXPECT_THAT(plan.output, HasSubstr("tuned: a tuning-cache entry"));
  Result rules = run(shape + " --no-tuning-cache");
  EXPECT_THAT(rules.output, ::testing::Not(HasSubstr("tuned:")));

  // A hand-edited entry naming a variant that cannot run: one warning, the rules decide.
  std::string text((std::istreambuf_iterator<char>(std::ifstream(cache).rdbuf())), {});
  auto edited = nlohmann::json::parse(text);
  edited["entries"][0]["variant"] = "prefill_streaming_f32";
  std::ofstream(cache) << edited.dump();
  Result stale = run(shape);
  EXPECT_EQ(stale.status, 0) << stale.output;
  EXPECT_THAT(stale.output, HasSubstr("ignored"));
  EXPECT_THAT(stale.output, ::testing::Not(HasSubstr("tuned:")));
}

// Vision cases are tuned too (their variants), into entries of family vision
// that `vkattn plan vision` then follows.
TEST_F(TuneCli, TunesVisionVariants) {
  std::ofstream(suite_) << R"({"suite": "tiny", "cases": [{"family": "vision", "patches": 48, "heads": 2,
                            "head_dim": 32, "dtype": "f32"}]})";
  Result tune = run("tune --suite " + suite_ + " --runs 2 --json", true);
  ASSERT_EQ(tune.status, 0) << tune.output;
  const auto line = nlohmann::json::parse(last_line(tune.output));
  EXPECT_EQ(line.at("family"), "vision") << tune.output;
  EXPECT_EQ(line.at("skipped"), "") << tune.output;
  EXPECT_GE(line.at("tried").get<int>(), 3) << tune.output;
  const std::string variant = line.at("variant");
  EXPECT_THAT(variant, ::testing::StartsWith("vision_"));
  const auto file = nlohmann::json::parse(std::ifstream(cache_));
  ASSERT_EQ(file.at("entries").size(), 1u);
  EXPECT_EQ(file["entries"][0].at("family"), "vision");
  Result plan = run("plan vision --patches 48 --heads 2 --head-dim 32 --dtype f32 --explain");
  EXPECT_EQ(plan.status, 0) << plan.output;
  EXPECT_THAT(plan.output, HasSubstr("chosen: " + variant + " (tuned: "));
}

}  // namespace
}  // namespace vkattn

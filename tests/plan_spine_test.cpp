// The public plan on the shipped caps files (no GPU): JSON both ways, one
// override handling for every family, options a family does not honour, and
// the tuning cache (consulted after the capability filter, stale entries
// ignored with one warning).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "ops/text/text_plan.hpp"
#include "planner/tune_cache.hpp"
#include "shaders/text_attention_interface.h"
#include "test_paths.hpp"
#include "vkattn/audio.hpp"
#include "vkattn/error.hpp"
#include "vkattn/plan.hpp"
#include "vkattn/text.hpp"
#include "vkattn/vision.hpp"

namespace vkattn {
namespace {

using ::testing::HasSubstr;

DeviceCaps lavapipe() { return load_caps_file(testing::caps_path("lavapipe.json")); }
DeviceCaps h200() { return load_caps_file(testing::caps_path("nvidia-h200.json")); }

// Llama-3-8B decode over a 4096-key contiguous cache.
TextAttentionParams decode_params(uint32_t kv_len = 4096) {
  TextAttentionParams p;
  p.num_heads = 32;
  p.num_kv_heads = 8;
  p.head_dim = 128;
  p.kv_capacity = kv_len;
  p.kv_len = {kv_len};
  p.start_pos = {kv_len - 1};
  return p;
}
constexpr TextTensorTypes kF16Kv{DType::f32, DType::f16, DType::f32, false};

PlanOptions rules_only() {
  PlanOptions o;
  o.use_tuning_cache = false;
  return o;
}

TEST(PlanSpine, TextPlanCarriesWhatRecordingNeeds) {
  const Plan p = plan_text(h200(), decode_params(), kF16Kv, rules_only());
  EXPECT_EQ(p.family, PlanFamily::text);
  EXPECT_EQ(p.variant, "decode_flash_f16kv");
  EXPECT_FALSE(p.tuned);
  ASSERT_FALSE(p.dispatches.empty());
  EXPECT_EQ(p.dispatches[0].module.rfind("text_decode_flash", 0), 0u) << p.dispatches[0].module;
  EXPECT_EQ(p.dispatches[0].spec_constants.at(0), 128u);  // TEXT_SC_HEAD_DIM
  // The grid's z is batch x splits; the split grid fills the H200's compute units.
  EXPECT_EQ(p.dispatches[0].grid[2], p.geometry.splits);
  EXPECT_GE(p.geometry.splits, 2u);
  EXPECT_FALSE(p.candidates.empty());
}

TEST(PlanSpine, JsonRoundTripsEveryFamily) {
  AudioAttentionParams a;
  a.frames = 48;
  a.num_heads = 2;
  a.head_dim = 64;
  VisionAttentionParams v{256, 4, 64, std::nullopt, VisionLayout::phd};
  for (const Plan& p : {plan_text(lavapipe(), decode_params(), kF16Kv, rules_only()),
                        plan_vision(lavapipe(), v, VisionTensorTypes{DType::f16, DType::f16}, {}),
                        plan_audio(lavapipe(), a, AudioTensorTypes{}, {})}) {
    const Plan back = plan_from_json(to_json(p));
    EXPECT_EQ(back, p) << to_json(p);
    EXPECT_THAT(explain(back), HasSubstr("chosen: " + p.variant));
  }
}

TEST(PlanSpine, BadPlanJsonNamesTheField) {
  const std::string good = to_json(plan_text(lavapipe(), decode_params(), kF16Kv, rules_only()));
  auto j = nlohmann::json::parse(good);
  j["dispatches"][0]["grid"] = {1, 2};
  try {
    plan_from_json(j.dump());
    FAIL() << "a two-number grid was accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("plan.dispatches[0].grid: expected 3 counts, got 2"));
  }
  j = nlohmann::json::parse(good);
  j["family"] = "speech";
  EXPECT_THROW(plan_from_json(j.dump()), Error);
  j = nlohmann::json::parse(good);
  j.erase("scratch_bytes");
  try {
    plan_from_json(j.dump());
    FAIL() << "a plan without scratch_bytes was accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("plan.scratch_bytes: expected a value, got none"));
  }
  EXPECT_THROW(plan_from_json("{"), Error);
  EXPECT_THROW(plan_from_json("8888888888888888e88812"), Error);  // past a double: nlohmann's out_of_range
  j = nlohmann::json::parse(good);
  j["geometry"]["splits"] = 1.6e88;
  try {
    plan_from_json(j.dump());
    FAIL() << "a float split count was accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("plan.geometry.splits: expected an integer from 0 to 4294967295"));
  }
}

// One override handling: an unknown name is the same message and error kind
// in every family; non-strict, one warning and the capability choice.
TEST(PlanSpine, OneOverrideHandlingForEveryFamily) {
  PlanOptions o;
  o.variant = "nosuch";
  o.strict = true;
  AudioAttentionParams a;
  a.frames = 12;
  a.head_dim = 64;
  const VisionAttentionParams v{64, 2, 64, std::nullopt, VisionLayout::phd};
  auto message = [](auto&& plan) {
    try {
      plan();
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(message([&] { plan_text(lavapipe(), decode_params(), kF16Kv, o); }),
              HasSubstr("variant: expected a text variant name (see `vkattn plan text`), got 'nosuch'"));
  EXPECT_THAT(message([&] { plan_vision(lavapipe(), v, {}, o); }),
              HasSubstr("variant: expected a vision variant name (see `vkattn plan vision`), got 'nosuch'"));
  EXPECT_THAT(message([&] { plan_audio(lavapipe(), a, {}, o); }),
              HasSubstr("variant: expected an audio variant name (see `vkattn plan audio`), got 'nosuch'"));
  o.strict = false;
  for (const Plan& p : {plan_text(lavapipe(), decode_params(), kF16Kv, o), plan_vision(lavapipe(), v, {}, o),
                        plan_audio(lavapipe(), a, {}, o)}) {
    ASSERT_EQ(p.warnings.size(), 1u) << p.variant;
    EXPECT_THAT(p.warnings[0], HasSubstr("falling back to capability selection"));
    EXPECT_THAT(p.reason, HasSubstr("override_fallback"));
  }
  // Audio: the other dtype's kernel is known but cannot take these inputs.
  o.variant = "audio_block_local_f16";
  o.strict = true;
  try {
    plan_audio(lavapipe(), a, {}, o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::unsupported);
    EXPECT_THAT(e.what(), HasSubstr("variant 'audio_block_local_f16' rejected: takes f16 inputs, call has f32"));
  }
}

TEST(PlanSpine, VisionAndAudioRejectOptionsTheyDoNotHonour) {
  AudioAttentionParams a;
  a.frames = 12;
  a.head_dim = 64;
  const VisionAttentionParams v{64, 2, 64, std::nullopt, VisionLayout::phd};
  auto with = [](auto set) {
    PlanOptions o;
    set(o);
    return o;
  };
  const std::pair<const char*, PlanOptions> cases[] = {
      {"path: expected unset", with([](PlanOptions& o) { o.path.push_back({Phase::prefill, {}, "x"}); })},
      {"splits: expected unset", with([](PlanOptions& o) { o.splits = 4; })},
      {"tile_keys: expected unset", with([](PlanOptions& o) { o.tile_keys = 16; })},
  };
  // Vision on the tensor-core rows too: chosen by rule on the H200, forced
  // (the plain-GLSL build) on lavapipe.
  const VisionTensorTypes f16{DType::f16, DType::f16};
  struct VisionCall {
    DeviceCaps caps;
    VisionTensorTypes types;
    const char* variant;
  };
  const VisionCall vision_calls[] = {{lavapipe(), {}, ""},
                                     {h200(), f16, ""},
                                     {h200(), f16, "vision_flash_coopmat_f16"},
                                     {lavapipe(), f16, "vision_flash_emulated_f16"}};
  ASSERT_EQ(plan_vision(h200(), v, f16, {}).variant, "vision_flash_coopmat_f16");
  for (auto [want, o] : cases) {
    for (const auto& call : vision_calls) {
      o.variant = call.variant;
      try {
        plan_vision(call.caps, v, call.types, o);
        ADD_FAILURE() << "vision accepted " << want << " (" << call.caps.name << ", " << call.variant << ")";
      } catch (const Error& e) {
        EXPECT_THAT(e.what(), HasSubstr(want)) << call.variant;
        EXPECT_THAT(e.what(), HasSubstr("for vision attention")) << call.variant;
      }
    }
    o.variant.clear();
    try {
      plan_audio(lavapipe(), a, {}, o);
      ADD_FAILURE() << "audio accepted " << want;
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr(want));
      EXPECT_THAT(e.what(), HasSubstr("for audio attention"));
    }
  }
}

// Vision on the tensor-core engine: one dispatch of the text engine's module
// with its specialization constants, through JSON and back.
TEST(PlanSpine, VisionTensorCoreRowsPlanTheTextEngine) {
  const VisionAttentionParams v{2304, 12, 64, std::nullopt, VisionLayout::hpd};
  const Plan p = plan_vision(h200(), v, VisionTensorTypes{DType::f16, DType::f16}, {});
  EXPECT_EQ(p.variant, "vision_flash_coopmat_f16");
  ASSERT_EQ(p.dispatches.size(), 1u);
  EXPECT_EQ(p.dispatches[0].module, "flash_coopmat");
  ASSERT_EQ(p.dispatches[0].spec_constants.size(), size_t(TEXT_SC_COUNT));
  EXPECT_EQ(p.dispatches[0].spec_constants[TEXT_SC_HEAD_DIM], 64u);
  EXPECT_EQ(p.dispatches[0].spec_constants[TEXT_SC_Q_TYPE], uint32_t(DTYPE_F16));
  EXPECT_EQ(p.dispatches[0].grid[0], (2304 + p.geometry.query_rows - 1) / p.geometry.query_rows);
  EXPECT_EQ(p.dispatches[0].grid[1], 12u);
  EXPECT_EQ(plan_from_json(to_json(p)), p);
}

// What the tiered layout, quantized K/V and pools read by address change in a text plan.
TEST(PlanSpine, TextPlanCarriesTheKvCacheChoices) {
  const auto attention = [](const Plan& p) { return p.dispatches.at(0); };
  const Plan base = plan_text(h200(), decode_params(), kF16Kv, rules_only());
  EXPECT_EQ(attention(base).spec_constants[TEXT_SC_LAYOUT], uint32_t(TEXT_LAYOUT_CONTIGUOUS));

  TextAttentionParams tiered = decode_params();
  tiered.layout = KvLayout::tiered;
  tiered.hot_window = 64;
  EXPECT_EQ(attention(plan_text(h200(), tiered, kF16Kv, rules_only())).spec_constants[TEXT_SC_LAYOUT],
            uint32_t(TEXT_LAYOUT_TIERED));

  for (auto [kv, code] : {std::pair{DType::i8, DTYPE_INT8}, std::pair{DType::i4, DTYPE_INT4}}) {
    TextAttentionParams q = decode_params();
    for (uint32_t group : {0u, 32u}) {
      q.kv_quant_group = group;
      const Plan p = plan_text(h200(), q, TextTensorTypes{DType::f32, kv, DType::f32, false}, rules_only());
      EXPECT_EQ(attention(p).spec_constants[TEXT_SC_KV_TYPE], uint32_t(code)) << p.variant;
      EXPECT_EQ(attention(p).spec_constants[TEXT_SC_KV_GROUP], group) << p.variant;
    }
  }
  // An f16 cache ignores the group.
  TextAttentionParams grouped = decode_params();
  grouped.kv_quant_group = 32;
  EXPECT_EQ(plan_text(h200(), grouped, kF16Kv, rules_only()), base);

  TextTensorTypes by_address = kF16Kv;
  by_address.kv_by_address = true;
  const Plan far = plan_text(h200(), decode_params(), by_address, rules_only());
  EXPECT_EQ(far.variant, base.variant);
  EXPECT_EQ(attention(far).module, attention(base).module + "_kv_address");
  EXPECT_THAT(far.reason, HasSubstr("read through buffer device addresses"));
}

// decode_flash_coopmat (by rule on the H200 for wide groups in big batches):
// split partials and the reduce, both tuning overrides kept together.
TEST(PlanSpine, TensorCoreDecodeSplitsAndTakesBothOverrides) {
  TextAttentionParams p = decode_params();
  p.batch = 32;
  p.num_heads = 16;
  p.num_kv_heads = 2;
  p.head_dim = 64;
  const TextTensorTypes f16{DType::f16, DType::f16, DType::f16, false};
  const Plan chosen = plan_text(h200(), p, f16, rules_only());
  EXPECT_EQ(chosen.variant, "decode_flash_coopmat_f16");
  ASSERT_GE(chosen.geometry.splits, 2u);
  ASSERT_EQ(chosen.dispatches.size(), 2u);
  EXPECT_EQ(chosen.dispatches[0].spec_constants[TEXT_SC_SPLIT], 1u);
  EXPECT_EQ(chosen.dispatches[1].module, "text_split_reduce");

  PlanOptions o = rules_only();
  o.splits = 1;
  const Plan one = plan_text(h200(), p, f16, o);
  EXPECT_EQ(one.dispatches.size(), 1u);
  EXPECT_EQ(one.dispatches[0].spec_constants[TEXT_SC_SPLIT], 0u);
  o.splits = 3;
  o.tile_keys = 16;  // the key tile makes a fresh fragment geometry; the split count must survive it
  const Plan both = plan_text(h200(), p, f16, o);
  EXPECT_EQ(both.geometry.splits, 3u);
  EXPECT_EQ(both.geometry.tile_keys, 16u);
  EXPECT_EQ(both.dispatches[0].grid[2], p.batch * 3);
}

// The tuning cache, in a file of the test's own; the planner reads it again
// after each write (reload_tune_table), as `vkattn tune` makes it do.
class TuningCache : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("vkattn-tune-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "tune.json").string();
    setenv("VKATTN_TUNE_CACHE", path_.c_str(), 1);
    planner::reload_tune_table();
  }
  void TearDown() override {
    unsetenv("VKATTN_TUNE_CACHE");
    planner::reload_tune_table();
    std::filesystem::remove_all(dir_);
  }
  // A file holding one text entry for `caps` and the bucket of decode_params(kv_len).
  void write_entry(const DeviceCaps& caps, const planner::TuneEntry& e, uint32_t kv_len = 4096) {
    planner::TuneTable t;
    const TextAttentionParams p = decode_params(kv_len);
    t.set(caps, PlanFamily::text, bucket_of(p), e);
    t.save(path_);
    planner::reload_tune_table();
  }
  static std::string bucket_of(const TextAttentionParams& p) {
    return text::tune_bucket(planner::text_shape_of(p, kF16Kv.q, kF16Kv.kv));
  }
  std::filesystem::path dir_;
  std::string path_;
};

TEST_F(TuningCache, NoFileMeansTheRules) {
  const Plan p = plan_text(h200(), decode_params(), kF16Kv, {});
  EXPECT_FALSE(p.tuned);
  EXPECT_EQ(p, plan_text(h200(), decode_params(), kF16Kv, rules_only()));
}

TEST_F(TuningCache, AnEntryDecidesAndExplainSaysSo) {
  write_entry(h200(), {"decode_split_f16kv", 16, 0, 0.01});
  const Plan p = plan_text(h200(), decode_params(), kF16Kv, {});
  EXPECT_TRUE(p.tuned);
  EXPECT_EQ(p.variant, "decode_split_f16kv");
  EXPECT_EQ(p.geometry.splits, 16u);
  EXPECT_THAT(p.reason, HasSubstr("tuned"));
  EXPECT_THAT(explain(p), HasSubstr("tuned: a tuning-cache entry"));
  // Lengths in the same power-of-two bucket share the entry; another device does not.
  EXPECT_TRUE(plan_text(h200(), decode_params(3000), kF16Kv, {}).tuned);
  EXPECT_FALSE(plan_text(lavapipe(), decode_params(), kF16Kv, {}).tuned);
  // Overrides and use_tuning_cache = false leave the entry out.
  EXPECT_FALSE(plan_text(h200(), decode_params(), kF16Kv, rules_only()).tuned);
  PlanOptions forced;
  forced.variant = "decode_streaming_f16kv";
  EXPECT_EQ(plan_text(h200(), decode_params(), kF16Kv, forced).variant, "decode_streaming_f16kv");
}

TEST_F(TuningCache, StaleOrEditedEntriesAreIgnoredWithOneWarning) {
  const Plan rules = plan_text(h200(), decode_params(), kF16Kv, rules_only());
  // A variant the capability filter rejects (prefill for a decode call), one
  // that does not exist, and a tuning value the variant cannot take.
  for (const planner::TuneEntry& e : {planner::TuneEntry{"prefill_streaming_f16kv", 0, 0, 0.01},
                                      planner::TuneEntry{"decode_nosuch", 0, 0, 0.01},
                                      planner::TuneEntry{"decode_flash_f16kv", 0, 48, 0.01}}) {
    write_entry(h200(), e);
    const Plan p = plan_text(h200(), decode_params(), kF16Kv, {});
    EXPECT_FALSE(p.tuned) << e.variant;
    EXPECT_TRUE(p.same_work(rules)) << e.variant;
    ASSERT_EQ(p.warnings.size(), 1u) << e.variant;
    EXPECT_THAT(p.warnings[0], HasSubstr("tuning cache entry for"));
    EXPECT_THAT(p.warnings[0], HasSubstr("ignored"));
  }
}

TEST_F(TuningCache, ABrokenFileLeavesTheRules) {
  std::ofstream(path_) << "{\"version\": 1, \"entries\": [{\"device\": 3}]}";
  EXPECT_THROW(planner::TuneTable::load(path_), Error);
  planner::reload_tune_table();
  EXPECT_FALSE(plan_text(h200(), decode_params(), kF16Kv, {}).tuned);
  std::ofstream(path_) << R"({"version": 1, "entries": [{"device": "d", "family": "text", "bucket": "b",
                                                          "variant": "v", "splits": 1e300}]})";
  try {
    planner::TuneTable::load(path_);
    ADD_FAILURE() << "a float split count was accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("entries[0].splits: expected an integer from 0 to 4294967295"));
  }
  for (const char* version : {"1e72", "-1", "\"1\"", "2"}) {
    std::ofstream(path_) << "{\"version\": " << version << ", \"entries\": []}";
    try {
      planner::TuneTable::load(path_);
      ADD_FAILURE() << "version " << version << " was accepted";
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr("version: expected 1, got"));
    }
  }
  std::ofstream(path_) << "not json";
  planner::reload_tune_table();
  EXPECT_FALSE(plan_text(h200(), decode_params(), kF16Kv, {}).tuned);
}

TEST_F(TuningCache, SavesAndLoadsEntries) {
  planner::TuneTable t;
  t.set(h200(), PlanFamily::text, "b1", {"decode_split_f16kv", 8, 0, 0.5});
  t.set(lavapipe(), PlanFamily::vision, "b2", {"vision_flash_q8_f32", 0, 0, 1.5});
  t.save(path_);
  const planner::TuneTable back = planner::TuneTable::load(path_);
  EXPECT_EQ(back.size(), 2u);
  ASSERT_NE(back.find(h200(), PlanFamily::text, "b1"), nullptr);
  EXPECT_EQ(*back.find(h200(), PlanFamily::text, "b1"), (planner::TuneEntry{"decode_split_f16kv", 8, 0, 0.5}));
  EXPECT_EQ(back.find(h200(), PlanFamily::vision, "b1"), nullptr);
}

}  // namespace
}  // namespace vkattn

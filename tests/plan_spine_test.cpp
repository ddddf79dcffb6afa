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
#include <optional>
#include <set>
#include <tuple>
#include <nlohmann/json.hpp>

#include "ops/text/text_plan.hpp"
#include "ops/vision/vision_plan.hpp"
#include "planner/geometry_rules.hpp"
#include "planner/split_grid.hpp"
#include "planner/tune_cache.hpp"
#include "shaders/text_attention_interface.h"
#include "test_paths.hpp"
#include "vkattn/audio.hpp"
#include "vkattn/bdpa.hpp"
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
TextAttentionParams llama_decode_params(uint32_t kv_len = 4096) {
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
constexpr TextTensorTypes kF32Kv{DType::f32, DType::f32, DType::f32, false};  // on decode_flash (no fragment row)

PlanOptions rules_only() {
  PlanOptions o;
  o.use_tuning_cache = false;
  return o;
}

// A BDPA decode (Llama-3-8B heads) over an index of `kv_len` entries, one basis
// and residual row per entry.
BdpaParams bdpa_decode(uint32_t kv_len = 4096) {
  BdpaParams p;
  p.num_heads = 32;
  p.num_kv_heads = 8;
  p.head_dim = 128;
  p.kv_capacity = p.num_basis = p.num_residual = kv_len;
  p.kv_len = {kv_len};
  p.start_pos = {kv_len - 1};
  return p;
}
constexpr BdpaTensorTypes kBdpaF16{DType::f32, DType::f16, DType::f32, false};

TEST(PlanSpine, TextPlanCarriesWhatRecordingNeeds) {
  const Plan p = plan_text(h200(), llama_decode_params(32768), kF32Kv, rules_only());
  EXPECT_EQ(p.family, PlanFamily::text);
  EXPECT_EQ(p.variant, "decode_flash_f32");
  EXPECT_FALSE(p.tuned);
  ASSERT_FALSE(p.dispatches.empty());
  EXPECT_EQ(p.dispatches[0].module.rfind("text_decode_flash", 0), 0u) << p.dispatches[0].module;
  EXPECT_EQ(p.dispatches[0].spec_constants.at(0), 128u);  // TEXT_SC_HEAD_DIM
  // The grid's z is batch x splits; the split grid fills the H200's compute units.
  EXPECT_EQ(p.dispatches[0].grid[2], p.geometry.splits);
  EXPECT_GE(p.geometry.splits, 2u);
  EXPECT_FALSE(p.candidates.empty());
  // 33 splits (one wave of 8 workgroups each): the last split of each row combines them, one dispatch.
  ASSERT_EQ(p.geometry.splits, 33u);
  ASSERT_EQ(p.dispatches.size(), 1u);
  EXPECT_EQ(p.dispatches[0].spec_constants[TEXT_SC_SPLIT], uint32_t(TEXT_SPLIT_LAST_COMBINES));
  // MQA, 2 workgroups a split: 132 splits, more partials than a last split's
  // merge reads in two rounds: partials, then the reduce dispatch.
  TextAttentionParams mqa = llama_decode_params(32768);
  mqa.num_heads = 8;
  mqa.num_kv_heads = 1;
  const Plan m = plan_text(h200(), mqa, kF32Kv, rules_only());
  ASSERT_EQ(m.geometry.splits, 132u);
  ASSERT_EQ(m.dispatches.size(), 2u);
  EXPECT_EQ(m.dispatches[0].spec_constants[TEXT_SC_SPLIT], uint32_t(TEXT_SPLIT_PARTIALS));
  EXPECT_EQ(m.dispatches[1].module, "text_split_reduce");
}

// The last split of each row combines the partials while each invocation of
// its merge reads at most two rounds of loads: one dispatch, the arrival
// counters in the scratch. Past that, or with indirect dispatch (the count may
// leave splits out), the reduce dispatch stays.
TEST(PlanSpine, TheLastSplitCombinesWhileItsMergeIsShort) {
  const Plan p = plan_text(h200(), llama_decode_params(1024), kF16Kv, rules_only());
  ASSERT_EQ(p.geometry.splits, 8u);  // 1024 keys: a 16-key tile for each of 8 warps of 8 splits
  ASSERT_EQ(p.dispatches.size(), 1u);
  EXPECT_EQ(p.dispatches[0].spec_constants[TEXT_SC_SPLIT], uint32_t(TEXT_SPLIT_LAST_COMBINES));
  const uint64_t rows = uint64_t(p.geometry.splits) * 32;
  EXPECT_EQ(p.scratch_bytes, rows * 128 * 4 + rows * 8 + 32 * 4);
  EXPECT_THAT(p.reason, HasSubstr("the last split of each row combines the partials"));
  TextTensorTypes indirect = kF16Kv;
  indirect.indirect = true;
  const Plan reduced = plan_text(h200(), llama_decode_params(1024), indirect, rules_only());
  ASSERT_EQ(reduced.dispatches.size(), 2u);
  EXPECT_EQ(reduced.dispatches[0].spec_constants[TEXT_SC_SPLIT], uint32_t(TEXT_SPLIT_PARTIALS));
  EXPECT_EQ(reduced.dispatches[1].module, "text_split_reduce");
  // MQA B1 (8 query heads of one KV head, one workgroup per split): at D64
  // two invocations share each of the 8 x 16 output columns, so 32 splits are
  // 16 partials an invocation; at D128 one column each; at D256
  // (256 invocations for 512 columns) 64 splits are 128, at D128 L32768 132
  // splits are 132, and at D128 L4096 the short walk's 4-warp workgroups
  // (128 invocations for 256 columns) make 64 splits of 64: those keep the
  // reduce.
  auto mqa = [](uint32_t d, uint32_t kv_len) {
    TextAttentionParams p = llama_decode_params(kv_len);
    p.num_heads = 8;
    p.num_kv_heads = 1;
    p.head_dim = d;
    return plan_text(h200(), p, kF16Kv, rules_only());
  };
  const Plan one = mqa(64, 4096);
  EXPECT_EQ(one.geometry.splits, 32u);
  EXPECT_EQ(one.dispatches.size(), 1u);
  for (const auto& [d, kv_len, splits] :
       {std::tuple{256u, 4096u, 64u}, std::tuple{128u, 32768u, 132u}, std::tuple{128u, 4096u, 64u}}) {
    const Plan two = mqa(d, kv_len);
    EXPECT_EQ(two.geometry.splits, splits) << d;
    ASSERT_EQ(two.dispatches.size(), 2u) << d;
    EXPECT_EQ(two.dispatches[1].module, "text_split_reduce");
  }
}

TEST(PlanSpine, JsonRoundTripsEveryFamily) {
  AudioAttentionParams a;
  a.frames = 48;
  a.num_heads = 2;
  a.head_dim = 64;
  VisionAttentionParams v{256, 4, 64, std::nullopt, VisionLayout::phd};
  for (const Plan& p : {plan_text(lavapipe(), llama_decode_params(), kF16Kv, rules_only()),
                        plan_vision(lavapipe(), v, VisionTensorTypes{DType::f16, DType::f16}, {}),
                        plan_audio(lavapipe(), a, AudioTensorTypes{}, {}),
                        plan_bdpa(h200(), bdpa_decode(), kBdpaF16, rules_only())}) {
    const Plan back = plan_from_json(to_json(p));
    EXPECT_EQ(back, p) << to_json(p);
    EXPECT_THAT(explain(back), HasSubstr("chosen: " + p.variant));
  }
}

TEST(PlanSpine, BadPlanJsonNamesTheField) {
  const std::string good = to_json(plan_text(lavapipe(), llama_decode_params(), kF16Kv, rules_only()));
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
  EXPECT_THAT(message([&] { plan_text(lavapipe(), llama_decode_params(), kF16Kv, o); }),
              HasSubstr("variant: expected a text variant name (see `vkattn plan text`), got 'nosuch'"));
  EXPECT_THAT(message([&] { plan_vision(lavapipe(), v, {}, o); }),
              HasSubstr("variant: expected a vision variant name (see `vkattn plan vision`), got 'nosuch'"));
  EXPECT_THAT(message([&] { plan_audio(lavapipe(), a, {}, o); }),
              HasSubstr("variant: expected an audio variant name (see `vkattn plan audio`), got 'nosuch'"));
  EXPECT_THAT(message([&] { plan_bdpa(lavapipe(), bdpa_decode(), kBdpaF16, o); }),
              HasSubstr("variant: expected a bdpa variant name (see `vkattn plan bdpa`), got 'nosuch'"));
  o.strict = false;
  for (const Plan& p : {plan_text(lavapipe(), llama_decode_params(), kF16Kv, o), plan_vision(lavapipe(), v, {}, o),
                        plan_audio(lavapipe(), a, {}, o), plan_bdpa(lavapipe(), bdpa_decode(), kBdpaF16, o)}) {
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

// BDPA on the spine: a long decode splits (attention, then text_split_reduce,
// with the partials' scratch), a short one writes the output itself; the
// options it has no use for are an Error naming them.
TEST(PlanSpine, BdpaPlanCarriesWhatRecordingNeeds) {
  const Plan split = plan_bdpa(h200(), bdpa_decode(32768), kBdpaF16, rules_only());
  EXPECT_EQ(split.family, PlanFamily::bdpa);
  EXPECT_EQ(split.variant, "bdpa_decode_split_f16kv");
  EXPECT_EQ(split.geometry.splits, 256u);  // 128-key chunks
  ASSERT_EQ(split.dispatches.size(), 2u);
  EXPECT_EQ(split.dispatches[0].module, "bdpa_attention");
  EXPECT_EQ(split.dispatches[0].grid[2], 256u);
  EXPECT_EQ(split.dispatches[1].module, "text_split_reduce");
  const uint64_t rows = 256ull * 32;  // splits x heads
  EXPECT_EQ(split.scratch_bytes, rows * 128 * 4 + rows * 8);
  EXPECT_THAT(explain(split), HasSubstr("chosen: bdpa_decode_split_f16kv"));

  const Plan short_kv = plan_bdpa(h200(), bdpa_decode(100), kBdpaF16, rules_only());
  EXPECT_EQ(short_kv.variant, "bdpa_decode_f16kv");
  EXPECT_EQ(short_kv.dispatches.size(), 1u);
  EXPECT_EQ(short_kv.scratch_bytes, 0u);
  // Lengths from the GPU: split for the index capacity, whatever the host hint.
  BdpaParams hinted = bdpa_decode(32768);
  hinted.kv_len = {100};
  BdpaTensorTypes on_gpu = kBdpaF16;
  on_gpu.kv_len_on_gpu = true;
  EXPECT_TRUE(plan_bdpa(h200(), hinted, on_gpu, rules_only()).same_work(split));

  PlanOptions with_keys, with_rows;
  with_keys.tile_keys = 16;
  with_rows.rows = 4;
  for (const auto& [name, o] : {std::pair{"tile_keys", with_keys}, std::pair{"rows", with_rows}}) {
    try {
      plan_bdpa(h200(), bdpa_decode(), kBdpaF16, o);
      ADD_FAILURE() << "bdpa accepted " << name;
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr(std::string(name) + ": expected unset for bdpa attention"));
    }
  }
  // Bad parameters are the validation's Error, before any planning.
  BdpaParams bad = bdpa_decode();
  bad.num_basis = 0;
  EXPECT_THROW(plan_bdpa(h200(), bad, kBdpaF16, {}), Error);
}

// A decode whose length is a host value: the plan is the same for every length
// of one split_length_bucket (what lets the plan cache key by it), and the
// split count still follows the length across buckets.
TEST(PlanSpine, HostLengthPlansAreConstantPerSplitBucket) {
  for (const DeviceCaps& caps : {h200(), lavapipe()}) {
    for (const TextTensorTypes& types : {kF16Kv, TextTensorTypes{DType::f16, DType::f16, DType::f16, false}}) {
      std::optional<Plan> first;
      uint32_t bucket = 0;
      std::set<uint32_t> splits;
      for (uint32_t len = 1; len <= 2200; ++len) {
        TextAttentionParams p = llama_decode_params(len);
        p.batch = 4;
        p.kv_capacity = 2200;
        const Plan plan = plan_text(caps, p, types, rules_only());
        splits.insert(plan.geometry.splits);
        const uint32_t b = planner::split_length_bucket(len) * 64 + planner::ceil_pow2(len);
        if (!first || b != bucket) {
          first = plan;
          bucket = b;
          continue;
        }
        EXPECT_TRUE(plan.same_work(*first)) << caps.name << " " << plan.variant << ": length " << len;
      }
      EXPECT_GE(splits.size(), 3u) << caps.name;
    }
    std::optional<Plan> first;
    for (uint32_t len = 2305; len <= 2320; ++len) {  // one bucket: 19 chunks of 128 keys
      const Plan plan = plan_bdpa(caps, bdpa_decode(len), kBdpaF16, rules_only());
      if (!first) first = plan;
      EXPECT_TRUE(plan.same_work(*first)) << caps.name << " bdpa length " << len;
    }
    EXPECT_EQ(first->geometry.splits, 19u);
    EXPECT_EQ(plan_bdpa(caps, bdpa_decode(2304), kBdpaF16, rules_only()).geometry.splits, 18u);
  }
}

// decode_online's shared memory as the shader declares it: per subgroup and
// head an f32 (m, l) pair and the head dim's vec4s of accumulator (4
// subgroups of 32 on the H200); decode_chunked adds a float per head, key of a
// step and lane, so more keys per step need more of it.
TEST(PlanSpine, DecodeOnlineSharedBytesFollowTheShaderArrays) {
  PlanOptions o = rules_only();
  o.variant = "decode_online_f16kv";
  o.strict = true;
  const Plan online = plan_text(h200(), llama_decode_params(100), kF16Kv, o);
  const uint32_t heads = online.geometry.head_group;
  EXPECT_EQ(online.geometry.shared_bytes, 4 * heads * (128 / 4 * 16 + 8));
  o.variant = "decode_chunked_f16kv";
  const Plan chunked = plan_text(lavapipe(), llama_decode_params(100), kF16Kv, o);
  const PlanGeometry& g = chunked.geometry;
  EXPECT_EQ(g.shared_bytes, g.head_group * (128 / 4 * 16 + 8) + 4 * g.head_group * g.tile_keys * g.workgroup_size);
  o.tile_keys = g.tile_keys * 2;
  EXPECT_EQ(plan_text(lavapipe(), llama_decode_params(100), kF16Kv, o).geometry.shared_bytes,
            g.shared_bytes + 4 * g.head_group * g.tile_keys * g.workgroup_size);
}

// Rows per workgroup, a tuning value like splits and keys per step: the
// variant's geometry is made again for it; a value it cannot take is an Error.
TEST(PlanSpine, RowsPerWorkgroupAreATuningValue) {
  PlanOptions o = rules_only();
  o.variant = "decode_split_f16kv";
  o.strict = true;
  const Plan own = plan_text(h200(), llama_decode_params(), kF16Kv, o);
  EXPECT_EQ(own.geometry.head_group, 4u);  // the 4 query heads of a KV head
  o.rows = 2;
  const Plan two = plan_text(h200(), llama_decode_params(), kF16Kv, o);
  EXPECT_EQ(two.geometry.head_group, 2u);
  EXPECT_EQ(two.dispatches[0].spec_constants[TEXT_SC_HEAD_GROUP], 2u);
  EXPECT_EQ(two.dispatches[0].grid[1], 8u * 2);  // KV heads x head groups
  TextAttentionParams prefill = llama_decode_params(512);
  prefill.seq_len = 64;
  prefill.start_pos = {448};
  o.variant = "prefill_tiled_small_f16kv";
  o.rows = 0;
  const uint32_t rows = plan_text(h200(), prefill, kF16Kv, o).geometry.query_rows;
  o.rows = 32;
  const Plan wide = plan_text(h200(), prefill, kF16Kv, o);
  EXPECT_EQ(wide.geometry.query_rows * wide.geometry.head_group, 32u);
  EXPECT_GT(wide.geometry.query_rows, rows);
  for (uint32_t bad : {3u, 128u}) {
    o.rows = bad;
    try {
      plan_text(h200(), prefill, kF16Kv, o);
      ADD_FAILURE() << "rows " << bad << " accepted";
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr("rows: expected a power of two from 1 to 64 for prefill_tiled_small_f16kv, got " +
                                      std::to_string(bad)));
    }
  }
  // The tensor-core rows take whole warps of 16 rows, up to their 128.
  o.variant = "prefill_flash_coopmat_f16";
  const TextTensorTypes f16{DType::f16, DType::f16, DType::f16, false};
  o.rows = 32;
  const Plan two_warps = plan_text(h200(), prefill, f16, o);
  EXPECT_EQ(two_warps.geometry.workgroup_size, 64u);
  EXPECT_EQ(two_warps.geometry.query_rows * two_warps.geometry.head_group, 32u);
  for (uint32_t bad : {8u, 256u}) {
    o.rows = bad;
    EXPECT_THROW(plan_text(h200(), prefill, f16, o), Error) << bad;
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
  const Plan base = plan_text(h200(), llama_decode_params(), kF16Kv, rules_only());
  EXPECT_EQ(attention(base).spec_constants[TEXT_SC_LAYOUT], uint32_t(TEXT_LAYOUT_CONTIGUOUS));

  TextAttentionParams tiered = llama_decode_params();
  tiered.layout = KvLayout::tiered;
  tiered.hot_window = 64;
  EXPECT_EQ(attention(plan_text(h200(), tiered, kF16Kv, rules_only())).spec_constants[TEXT_SC_LAYOUT],
            uint32_t(TEXT_LAYOUT_TIERED));

  for (auto [kv, code] : {std::pair{DType::i8, DTYPE_INT8}, std::pair{DType::i4, DTYPE_INT4}}) {
    TextAttentionParams q = llama_decode_params();
    for (uint32_t group : {0u, 32u}) {
      q.kv_quant_group = group;
      const Plan p = plan_text(h200(), q, TextTensorTypes{DType::f32, kv, DType::f32, false}, rules_only());
      EXPECT_EQ(attention(p).spec_constants[TEXT_SC_KV_TYPE], uint32_t(code)) << p.variant;
      EXPECT_EQ(attention(p).spec_constants[TEXT_SC_KV_GROUP], group) << p.variant;
    }
  }
  // An f16 cache ignores the group.
  TextAttentionParams grouped = llama_decode_params();
  grouped.kv_quant_group = 32;
  EXPECT_EQ(plan_text(h200(), grouped, kF16Kv, rules_only()), base);

  TextTensorTypes by_address = kF16Kv;
  by_address.kv_by_address = true;
  const Plan far = plan_text(h200(), llama_decode_params(), by_address, rules_only());
  EXPECT_EQ(far.variant, base.variant);
  EXPECT_EQ(attention(far).module, attention(base).module + "_kv_address");
  EXPECT_THAT(far.reason, HasSubstr("read through buffer device addresses"));
}

// decode_flash_coopmat (by override on the H200):
// split partials and the reduce, both tuning overrides kept together.
TEST(PlanSpine, TensorCoreDecodeSplitsAndTakesBothOverrides) {
  TextAttentionParams p = llama_decode_params();
  p.batch = 32;
  p.num_heads = 16;
  p.num_kv_heads = 2;
  p.head_dim = 64;
  const TextTensorTypes f16{DType::f16, DType::f16, DType::f16, false};
  PlanOptions forced = rules_only();
  forced.variant = "decode_flash_coopmat_f16";
  const Plan chosen = plan_text(h200(), p, f16, forced);
  EXPECT_EQ(chosen.variant, "decode_flash_coopmat_f16");
  ASSERT_GE(chosen.geometry.splits, 2u);
  ASSERT_EQ(chosen.dispatches.size(), 2u);
  EXPECT_EQ(chosen.dispatches[0].spec_constants[TEXT_SC_SPLIT], 1u);
  EXPECT_EQ(chosen.dispatches[1].module, "text_split_reduce");

  PlanOptions o = forced;
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
  // A file holding one text entry for `caps` and the bucket of llama_decode_params(kv_len).
  void write_entry(const DeviceCaps& caps, const planner::TuneEntry& e, uint32_t kv_len = 4096) {
    planner::TuneTable t;
    const TextAttentionParams p = llama_decode_params(kv_len);
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
  const Plan p = plan_text(h200(), llama_decode_params(), kF16Kv, {});
  EXPECT_FALSE(p.tuned);
  EXPECT_EQ(p, plan_text(h200(), llama_decode_params(), kF16Kv, rules_only()));
}

TEST_F(TuningCache, AnEntryDecidesAndExplainSaysSo) {
  write_entry(h200(), {"decode_split_f16kv", 16, 0, 0.01});
  const Plan p = plan_text(h200(), llama_decode_params(), kF16Kv, {});
  EXPECT_TRUE(p.tuned);
  EXPECT_EQ(p.variant, "decode_split_f16kv");
  EXPECT_EQ(p.geometry.splits, 16u);
  EXPECT_THAT(p.reason, HasSubstr("tuned"));
  EXPECT_THAT(explain(p), HasSubstr("tuned: a tuning-cache entry"));
  // Lengths in the same power-of-two bucket share the entry; another device does not.
  EXPECT_TRUE(plan_text(h200(), llama_decode_params(3000), kF16Kv, {}).tuned);
  EXPECT_FALSE(plan_text(lavapipe(), llama_decode_params(), kF16Kv, {}).tuned);
  // Overrides and use_tuning_cache = false leave the entry out.
  EXPECT_FALSE(plan_text(h200(), llama_decode_params(), kF16Kv, rules_only()).tuned);
  PlanOptions forced;
  forced.variant = "decode_streaming_f16kv";
  EXPECT_EQ(plan_text(h200(), llama_decode_params(), kF16Kv, forced).variant, "decode_streaming_f16kv");
}

TEST_F(TuningCache, StaleOrEditedEntriesAreIgnoredWithOneWarning) {
  const Plan rules = plan_text(h200(), llama_decode_params(), kF16Kv, rules_only());
  // A variant the capability filter rejects (prefill for a decode call), one
  // that does not exist, and a tuning value the variant cannot take.
  for (const planner::TuneEntry& e : {planner::TuneEntry{"prefill_streaming_f16kv", 0, 0, 0.01},
                                      planner::TuneEntry{"decode_nosuch", 0, 0, 0.01},
                                      planner::TuneEntry{"decode_flash_f16kv", 0, 48, 0.01}}) {
    write_entry(h200(), e);
    const Plan p = plan_text(h200(), llama_decode_params(), kF16Kv, {});
    EXPECT_FALSE(p.tuned) << e.variant;
    EXPECT_TRUE(p.same_work(rules)) << e.variant;
    ASSERT_EQ(p.warnings.size(), 1u) << e.variant;
    EXPECT_THAT(p.warnings[0], HasSubstr("tuning cache entry for"));
    EXPECT_THAT(p.warnings[0], HasSubstr("ignored"));
  }
}

// Rows per workgroup come from an entry like splits and keys per step.
TEST_F(TuningCache, AnEntryMaySetTheRowsPerWorkgroup) {
  write_entry(h200(), {"decode_split_f16kv", 0, 0, 0.01, 2});
  const Plan p = plan_text(h200(), llama_decode_params(), kF16Kv, {});
  EXPECT_TRUE(p.tuned);
  EXPECT_EQ(p.variant, "decode_split_f16kv");
  EXPECT_EQ(p.geometry.head_group, 2u);
  // Rows the variant cannot take: ignored with one warning, the rules decide.
  write_entry(h200(), {"decode_split_f16kv", 0, 0, 0.01, 3});
  const Plan stale = plan_text(h200(), llama_decode_params(), kF16Kv, {});
  EXPECT_FALSE(stale.tuned);
  ASSERT_EQ(stale.warnings.size(), 1u);
  EXPECT_THAT(stale.warnings[0], HasSubstr("rows: expected a power of two"));
  const planner::TuneTable back = planner::TuneTable::load(path_);
  EXPECT_EQ(back.find(h200(), PlanFamily::text, bucket_of(llama_decode_params()))->rows, 3u);
}

// The cache is keyed by family: a vision entry decides vision plans, a stale
// one is ignored with one warning, and a text entry for the same device does
// not reach vision.
TEST_F(TuningCache, VisionEntriesDecideVisionPlans) {
  const VisionAttentionParams v{256, 4, 64, std::nullopt, VisionLayout::phd};
  const VisionTensorTypes f32{DType::f32, DType::f32};
  const Plan rules = plan_vision(lavapipe(), v, f32, rules_only());
  ASSERT_NE(rules.variant, "vision_flash_q4_f32");
  auto write_vision = [&](const std::string& variant) {
    planner::TuneTable t;
    t.set(lavapipe(), PlanFamily::vision, vision::tune_bucket(v, f32), {variant, 0, 0, 0.01});
    t.set(lavapipe(), PlanFamily::text, vision::tune_bucket(v, f32), {"decode_split_f32", 0, 0, 0.01});
    t.save(path_);
    planner::reload_tune_table();
  };
  write_vision("vision_flash_q4_f32");
  const Plan p = plan_vision(lavapipe(), v, f32, {});
  EXPECT_TRUE(p.tuned);
  EXPECT_EQ(p.variant, "vision_flash_q4_f32");
  EXPECT_THAT(explain(p), HasSubstr("tuned: a tuning-cache entry"));
  EXPECT_FALSE(plan_vision(lavapipe(), VisionAttentionParams{257, 4, 64, std::nullopt, VisionLayout::phd}, f32, {})
                   .tuned);  // another bucket
  write_vision("vision_flash_nosuch_f32");
  const Plan stale = plan_vision(lavapipe(), v, f32, {});
  EXPECT_FALSE(stale.tuned);
  EXPECT_TRUE(stale.same_work(rules));
  ASSERT_EQ(stale.warnings.size(), 1u);
  EXPECT_THAT(stale.warnings[0], HasSubstr("ignored"));
}

TEST_F(TuningCache, ABrokenFileLeavesTheRules) {
  std::ofstream(path_) << "{\"version\": 1, \"entries\": [{\"device\": 3}]}";
  EXPECT_THROW(planner::TuneTable::load(path_), Error);
  planner::reload_tune_table();
  EXPECT_FALSE(plan_text(h200(), llama_decode_params(), kF16Kv, {}).tuned);
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
  EXPECT_FALSE(plan_text(h200(), llama_decode_params(), kF16Kv, {}).tuned);
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

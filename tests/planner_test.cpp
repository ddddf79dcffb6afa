// The text planner on synthetic devices, no GPU: every selection rule, every
// override path, explain() and plan_to_json().
//
// The case that selects each variant family (checklist). Devices "without
// shuffles" are the shipped ones with subgroup shuffles and cooperative matrices
// switched off, which the decode_flash rows need:
//   decode_flash_coopmat NVIDIA H200, f16 Q, B32 H8/1 D64 L4096 (8 query heads of a KV head as matrix rows)
//   decode_flash_emulated override only: lavapipe, B1 H8/2 D64
//   decode_flash         NVIDIA H200, B1 H32/8 D128 L4096 f32 Q, f32 KV (33 splits, one wave of 132 SMs); MHA; lavapipe D128
//   decode_online_split  H200 without shuffles, B1 H32/8 D128 L4096 (8 workgroups underfill 132 SMs, long KV)
//   decode_split         no-subgroup device, B1 H32/8 D128 L4096; lavapipe without shuffles D256 (past 16 x 8)
//   decode_online        lavapipe without shuffles, B1 H32/8 D128 L16 (KV too short to split); AMD-like B32
//   decode_subgroup      lavapipe without shuffles, B1 H8/8 D256 L16 (registers_online takes D <= 16 x 8)
//   decode_streaming     no-subgroup device, B32 H32/8 D128 L4096; 16 KiB device D512; 4 KiB device D256
//   prefill_tiled_large  lavapipe, B1 S128 H8/8 D64
//   prefill_tiled_small  lavapipe, B1 S128 H8/8 D128 (and D256)
//   prefill_streaming    lavapipe D384 (past tiled_small's 256), 16 KiB device D256 (tiles do not fit)
//   prefill_flash_coopmat NVIDIA H200, B1 S4096 H32/8 D128 f16 (and D64-D256, D72 padded; f32 Q with allow_reduced_precision)
//   prefill_flash_emulated override only: lavapipe, B1 S128 H8/2 D128 f16
//   prefill_flash_coopmat2 ranked after prefill_flash_coopmat, so override only on the shipped devices; why
//                        it cannot run (device, build, layout, pools, output): WorkgroupMatricesNeedTheExtensionAndContiguousKv
//   prefill_flash_wg_emulated override only: lavapipe, B1 S64 H8/2 D72 f16
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "planner/fragment_geometry.hpp"
#include "planner/split_grid.hpp"
#include "shaders/stream_interface.h"
#include "planner/text_planner.hpp"
#include "planner/text_variants.hpp"
#include "vkattn/caps.hpp"
#include "expect_error.hpp"
#include "test_paths.hpp"
#include "vkattn/error.hpp"

namespace vkattn::planner {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

DeviceCaps lavapipe() { return load_caps_file(testing::caps_path("lavapipe.json")); }
DeviceCaps nvidia() { return load_caps_file(testing::caps_path("nvidia-h200.json")); }

// A device as given, but without subgroup shuffles and cooperative matrices:
// neither decode_flash row can run, so the older decode rows decide.
DeviceCaps without_flash_decode(DeviceCaps c) {
  c.subgroup_shuffle = false;
  c.cooperative_matrix_nv = false;
  return c;
}

DeviceCaps amd_like() {
  DeviceCaps c;
  c.name = "AMD-like (wave64)";
  c.type = "discrete";
  c.vendor = "amd";
  c.subgroup_size = 64;
  c.min_subgroup_size = 32;
  c.max_subgroup_size = 64;
  c.subgroup_size_control = true;
  c.subgroup_basic = c.subgroup_arithmetic = c.subgroup_shuffle = c.subgroup_ballot = true;
  c.shader_float16 = c.storage_16bit = true;
  c.max_shared_memory_bytes = 65536;
  c.max_workgroup_invocations = 1024;
  c.compute_units = 96;
  return c;
}

DeviceCaps no_subgroup() {
  DeviceCaps c;
  c.name = "no-subgroup";
  c.type = "integrated";
  c.subgroup_size = 32;
  c.min_subgroup_size = c.max_subgroup_size = 32;
  c.subgroup_basic = true;  // basic only: no arithmetic
  c.max_shared_memory_bytes = 32768;
  c.max_workgroup_invocations = 256;
  c.compute_units = 24;
  return c;
}

// An older mobile-class GPU: 16 KiB of shared memory, no subgroup arithmetic.
DeviceCaps small_shared() {
  DeviceCaps c;
  c.name = "small-shared (16 KiB)";
  c.type = "integrated";
  c.subgroup_size = 32;
  c.min_subgroup_size = c.max_subgroup_size = 32;
  c.subgroup_basic = true;
  c.max_shared_memory_bytes = 16384;
  c.max_workgroup_invocations = 256;
  c.compute_units = 16;
  return c;
}

TextShape decode(uint32_t b, uint32_t h, uint32_t hkv, uint32_t d, uint32_t l, DType q = DType::f32,
                 DType kv = DType::f32) {
  TextShape s;
  s.batch = b;
  s.seq_len = 1;
  s.num_heads = h;
  s.num_kv_heads = hkv;
  s.head_dim = d;
  s.kv_len = l;
  s.q = q;
  s.kv = kv;
  return s;
}

TextShape prefill(uint32_t s_len, uint32_t h, uint32_t hkv, uint32_t d, DType q = DType::f32, DType kv = DType::f32) {
  TextShape s = decode(1, h, hkv, d, s_len, q, kv);
  s.seq_len = s_len;
  return s;
}

const PlanCandidate& candidate(const TextPlan& p, const std::string& name) {
  for (const auto& c : p.candidates)
    if (c.variant == name) return c;
  ADD_FAILURE() << "no candidate " << name;
  static PlanCandidate none;
  return none;
}

using vkattn::testing::expect_error;

// ---- the devices themselves -------------------------------------------------

TEST(PlannerCaps, ShippedCapsFilesDescribeTheRealDevices) {
  const DeviceCaps lp = lavapipe(), nv = nvidia();
  EXPECT_EQ(lp.type, "cpu");
  EXPECT_EQ(lp.subgroup_size, 8u);
  EXPECT_EQ(lp.max_shared_memory_bytes, 32768u);
  EXPECT_EQ(lp.compute_units, 0u);
  EXPECT_EQ(nv.name, "NVIDIA H200");
  EXPECT_EQ(nv.subgroup_size, 32u);
  EXPECT_EQ(nv.max_shared_memory_bytes, 49152u);
  EXPECT_EQ(nv.compute_units, 132u);
  EXPECT_TRUE(nv.has_coop_shape(16, 16, 16, "f16", "f32"));
}

TEST(PlannerTable, EveryFamilyHasEveryDtypePairOnce) {
  std::set<std::string> names;
  for (const auto& v : text_variants()) {
    EXPECT_TRUE(names.insert(v.name).second) << "duplicate " << v.name;
    EXPECT_EQ(v.name, v.family + "_" + dtype_suffix(v.q, v.kv));
    EXPECT_EQ(find_text_variant(v.name), &v);
    EXPECT_EQ(v.phase == Phase::prefill, v.family.rfind("prefill_", 0) == 0) << v.name;
  }
  for (const char* fam : {"prefill_tiled_large", "prefill_tiled_small", "prefill_streaming", "decode_flash", "decode_online_split",
                          "decode_split", "decode_online", "decode_subgroup", "decode_streaming"})
    for (const char* sfx : {"f32", "f16kv", "f16", "bf16kv", "bf16"})
      EXPECT_TRUE(names.count(std::string(fam) + "_" + sfx)) << fam << "_" << sfx;
  EXPECT_EQ(find_text_variant("nosuch"), nullptr);
  EXPECT_EQ(dtype_suffix(DType::f32, DType::f16), "f16kv");
  EXPECT_EQ(dtype_suffix(DType::bf16, DType::bf16), "bf16");
  EXPECT_EQ(dtype_suffix(DType::f32, DType::i8), "i8kv");
  EXPECT_EQ(dtype_suffix(DType::f16, DType::i4), "f16_i4kv");
}

// ---- decode rules ---------------------------------------------------------

// Selects decode_flash: NVIDIA H200, Llama-3-8B decode with f32 K/V (which
// the tensor-core rows do not take), one sequence. 8 workgroups per split
// (the 4 query heads of a KV head share one): one wave of two workgroups per
// SM, 33 splits, at L4096 and at L32768.
TEST(PlannerRules, FlashDecodeFillsTheH200) {
  auto p = plan_text(nvidia(), decode(1, 32, 8, 128, 4096, DType::f32, DType::f32));
  EXPECT_EQ(p.variant->name, "decode_flash_f32");
  EXPECT_THAT(p.reason, StartsWith("flash_decode"));
  EXPECT_EQ(p.geometry.head_group, 4u);
  EXPECT_EQ(p.geometry.key_lanes, 32u);  // 128 f32 = 32 words of 16 bytes
  EXPECT_EQ(p.geometry.workgroup_size, 256u);
  EXPECT_EQ(p.geometry.required_subgroup_size, 32u);
  EXPECT_EQ(p.geometry.splits, 33u);
  EXPECT_EQ(p.geometry.shared_bytes, 8u * 4 * 128 * 4 + 8 * 4 * 8);
  EXPECT_EQ(plan_text(nvidia(), decode(1, 32, 8, 128, 32768, DType::f32, DType::f32)).geometry.splits, 33u);
  // A batch that fills the wave on its own (256 workgroups) does not split.
  auto batch = plan_text(nvidia(), decode(32, 32, 8, 128, 2048, DType::f32, DType::f32));
  EXPECT_EQ(batch.variant->name, "decode_flash_f32");
  EXPECT_EQ(batch.geometry.splits, 1u);
  // MQA: 4 of the 8 query heads of the KV head per workgroup (registers, not bytes, bound it).
  EXPECT_EQ(plan_text(nvidia(), decode(4, 8, 1, 64, 8192, DType::f32, DType::f32)).geometry.head_group, 4u);
  // One sequence of 32 KV heads: 2 x 132 / 32 rounds down to 8 splits at any
  // length; two sequences 4.
  auto mha = plan_text(nvidia(), decode(1, 32, 32, 128, 32768, DType::f16, DType::f16));
  EXPECT_EQ(mha.variant->name, "decode_flash_f16");
  EXPECT_EQ(mha.geometry.splits, 8u);
  EXPECT_EQ(plan_text(nvidia(), decode(1, 32, 32, 128, 4096, DType::f16, DType::f16)).geometry.splits, 8u);
  EXPECT_EQ(plan_text(nvidia(), decode(2, 32, 32, 64, 4096, DType::f16, DType::f16)).geometry.splits, 4u);
  // Eight sequences fill the wave alone: one split up to 8192 keys, two past it.
  EXPECT_EQ(plan_text(nvidia(), decode(8, 32, 32, 64, 8192, DType::f16, DType::f16)).geometry.splits, 1u);
  EXPECT_EQ(plan_text(nvidia(), decode(8, 32, 32, 64, 8193, DType::f16, DType::f16)).geometry.splits, 2u);
  EXPECT_EQ(plan_text(nvidia(), decode(16, 32, 32, 128, 32768, DType::f16, DType::f16)).geometry.splits, 2u);
}

// decode_flash_coopmat: NVIDIA H200, by override (decode_stream_coopmat beat
// it on every shape it was chosen for). One warp per workgroup, the KV head's
// 8 query heads in its 16 rows; 16 workgroups per SM wanted, no split under
// 128 keys.
TEST(PlannerRules, TensorCoreDecodeByOverride) {
  PlanOptions forced;
  forced.variant = "decode_flash_coopmat_f16";
  forced.strict = true;
  auto p = plan_text(nvidia(), decode(32, 8, 1, 64, 4096, DType::f16, DType::f16), forced);
  EXPECT_EQ(p.variant->name, "decode_flash_coopmat_f16");
  EXPECT_EQ(p.geometry.workgroup_size, 32u);
  EXPECT_EQ(p.geometry.head_group, 8u);
  EXPECT_EQ(p.geometry.q_pos, 2u);
  EXPECT_EQ(p.geometry.tile_keys, 16u);
  EXPECT_EQ(p.geometry.required_subgroup_size, 32u);
  EXPECT_EQ(p.geometry.splits, 32u);  // 32 workgroups per split: 16 x 132 wanted, 4096 / 128 allowed
  for (const TextShape& s : {decode(32, 8, 1, 64, 4096, DType::f16, DType::f16),
                             decode(32, 32, 32, 64, 4096, DType::f16, DType::f16)}) {
    auto chosen = plan_text(nvidia(), s);
    EXPECT_NE(chosen.variant->name, "decode_flash_coopmat_f16");
    EXPECT_TRUE(candidate(chosen, "decode_flash_coopmat_f16").eligible);
  }
  EXPECT_EQ(candidate(plan_text(nvidia(), decode(1, 32, 8, 256, 4096, DType::f16, DType::f16)),
                      "decode_flash_coopmat_f16").why,
            "needs head_dim <= 128, got 256");
  // Its bf16 rows, by the same override (staged as f16 times powers of two).
  PlanOptions forced_bf16 = forced;
  forced_bf16.variant = "decode_flash_coopmat_bf16";
  EXPECT_EQ(plan_text(nvidia(), decode(32, 8, 1, 64, 4096, DType::bf16, DType::bf16), forced_bf16).variant->name,
            "decode_flash_coopmat_bf16");
  // MQA B1: one workgroup per split, 256 splits of 128 keys.
  EXPECT_EQ(plan_text(nvidia(), decode(1, 8, 1, 64, 32768, DType::f16, DType::f16), forced).geometry.splits, 256u);
  // Lengths from a GPU buffer: splits sized for the capacity.
  TextShape s = decode(1, 32, 8, 128, 1024, DType::f16, DType::f16);
  s.kv_len_bound = 131072;
  EXPECT_EQ(plan_text(nvidia(), s, forced).geometry.splits, 264u);  // 8 workgroups per split, 16 x 132 wanted
}

// Selects decode_stream_coopmat: NVIDIA H200, f16 Q, query heads sharing a KV
// head (GQA, MQA) at head dims that are multiples of 16 up to 128. The KV
// head's query heads are the 8 columns of its fragments; one wave of 8-warp
// workgroups (each warp stages K, then V, in one area, so 8 fit 48 KiB at
// D128), as many per compute unit as their shared memory and the register
// file allow, the split count rounded down to stay in it.
TEST(PlannerRules, StreamDecodeForSharedKvHeads) {
  auto p = plan_text(nvidia(), decode(1, 32, 8, 128, 32768, DType::f16, DType::f16));
  EXPECT_EQ(p.variant->name, "decode_stream_coopmat_f16");
  EXPECT_THAT(p.reason, StartsWith("tensor_core_stream"));
  EXPECT_EQ(p.variant->module, "text_decode_stream");
  EXPECT_EQ(p.geometry.workgroup_size, 256u);
  EXPECT_EQ(p.geometry.head_group, 4u);
  EXPECT_EQ(p.geometry.tile_keys, 16u);
  EXPECT_EQ(p.geometry.required_subgroup_size, 32u);
  EXPECT_EQ(p.geometry.splits, 16u);  // 8 workgroups per split, 132 compute units: 16, not 17
  EXPECT_GT(2 * p.geometry.shared_bytes, nvidia().max_shared_memory_bytes);
  EXPECT_EQ(plan_text(nvidia(), decode(8, 32, 8, 128, 4096, DType::f16, DType::f16)).geometry.splits, 2u);
  // D64: two 8-warp workgroups share a compute unit where the doubled grid
  // stays at 16 splits (B8: 4 splits, not 2; MQA B4: 16, not 8), or passes
  // them with long walks and a last-split merge of one round (B1 L32768: 33,
  // 11 partials an invocation); else one per unit (B1 L4096, a tile a walker:
  // 16, not 32; B8 H8/1 L32768, 17 partials an invocation: 16, not 33).
  auto d64 = plan_text(nvidia(), decode(1, 32, 8, 64, 32768, DType::f16, DType::f16));
  EXPECT_LE(2 * d64.geometry.shared_bytes, nvidia().max_shared_memory_bytes);
  EXPECT_EQ(d64.geometry.splits, 33u);
  EXPECT_EQ(plan_text(nvidia(), decode(1, 32, 8, 64, 16384, DType::f16, DType::f16)).geometry.splits, 16u);
  EXPECT_EQ(plan_text(nvidia(), decode(8, 32, 8, 64, 32768, DType::f16, DType::f16)).geometry.splits, 4u);
  EXPECT_EQ(plan_text(nvidia(), decode(4, 32, 1, 64, 8192, DType::f16, DType::f16)).geometry.splits, 16u);
  EXPECT_EQ(plan_text(nvidia(), decode(8, 8, 1, 64, 32768, DType::f16, DType::f16)).geometry.splits, 16u);
  EXPECT_EQ(plan_text(nvidia(), decode(1, 32, 8, 64, 4096, DType::f16, DType::f16)).geometry.splits, 16u);
  EXPECT_EQ(plan_text(nvidia(), decode(32, 32, 8, 128, 4096, DType::f16, DType::f16)).geometry.splits, 1u);
  EXPECT_EQ(plan_text(nvidia(), decode(1, 32, 8, 128, 1024, DType::f16, DType::f16)).geometry.splits, 8u);  // a tile a warp
  // A short walk on one KV head at D128, whose 8-warp workgroups (a tile a
  // walker) would reach a quarter of the units or fewer: workgroups of 4
  // warps and twice the splits. Walks that fill the units keep 8 warps, and
  // so does D64 (measured equal).
  auto short_walk = plan_text(nvidia(), decode(1, 8, 1, 128, 4096, DType::f16, DType::f16));
  EXPECT_EQ(short_walk.geometry.workgroup_size, 128u);
  EXPECT_EQ(short_walk.geometry.splits, 64u);
  EXPECT_EQ(plan_text(nvidia(), decode(1, 8, 1, 128, 1024, DType::f16, DType::f16)).geometry.workgroup_size, 128u);
  EXPECT_EQ(plan_text(nvidia(), decode(1, 8, 1, 128, 8192, DType::f16, DType::f16)).geometry.workgroup_size, 256u);
  EXPECT_EQ(plan_text(nvidia(), decode(1, 8, 1, 128, 32768, DType::f16, DType::f16)).geometry.workgroup_size, 256u);
  EXPECT_EQ(plan_text(nvidia(), decode(1, 8, 1, 64, 4096, DType::f16, DType::f16)).geometry.workgroup_size, 256u);
  // MQA takes 8 heads per workgroup; MHA and D72 stay on decode_flash.
  EXPECT_EQ(plan_text(nvidia(), decode(4, 32, 1, 64, 8192, DType::f16, DType::f16)).geometry.head_group, 8u);
  auto mha = plan_text(nvidia(), decode(8, 32, 32, 128, 4096, DType::f16, DType::f16));
  EXPECT_EQ(mha.variant->name, "decode_flash_f16");
  EXPECT_TRUE(candidate(mha, "decode_stream_coopmat_f16").eligible);
  EXPECT_EQ(candidate(plan_text(nvidia(), decode(1, 32, 8, 72, 4096, DType::f16, DType::f16)),
                      "decode_stream_coopmat_f16").why,
            "needs head_dim a multiple of 16, got 72");
  // Past 128 columns two warps share each tile (half of the head dim each):
  // with the first exchange slot in Q's staged rows, 8 warps (4 tile walkers)
  // fit 48 KiB; two slots of their own would not.
  auto d256 = plan_text(nvidia(), decode(1, 32, 8, 256, 4096, DType::f16, DType::f16));
  EXPECT_EQ(d256.variant->name, "decode_stream_coopmat_f16");
  EXPECT_EQ(d256.geometry.workgroup_size, 256u);
  EXPECT_TRUE(STREAM_EXCHANGE_IN_Q(8, 256));
  EXPECT_EQ(d256.geometry.shared_bytes, uint32_t(STREAM_SHARED_BYTES(8, 256)));
  EXPECT_LE(d256.geometry.shared_bytes, nvidia().max_shared_memory_bytes);
  EXPECT_GT(d256.geometry.shared_bytes + STREAM_EXCHANGE_SLOT_WORDS(8) * FLASH_WORD_BYTES,
            nvidia().max_shared_memory_bytes);
  // At D160 Q's rows are too short for a slot: both are the exchange's own.
  EXPECT_FALSE(STREAM_EXCHANGE_IN_Q(8, 160));
  EXPECT_EQ(STREAM_EXCHANGE_WORDS(8, 160), 2 * STREAM_EXCHANGE_SLOT_WORDS(8));
  EXPECT_EQ(candidate(plan_text(nvidia(), decode(1, 32, 8, 144, 4096, DType::f16, DType::f16)),
                      "decode_stream_coopmat_f16").why,
            "needs head_dim a multiple of 32, got 144");
  EXPECT_EQ(candidate(plan_text(nvidia(), decode(1, 32, 8, 288, 4096, DType::f16, DType::f16)),
                      "decode_stream_coopmat_f16").why,
            "needs head_dim <= 256, got 288");
  // f32 Q goes as two f16 parts (not rounded): no permission needed.
  auto f32_q = plan_text(nvidia(), decode(1, 32, 8, 128, 4096, DType::f32, DType::f16));
  EXPECT_EQ(f32_q.variant->name, "decode_stream_coopmat_f16kv");
  EXPECT_FALSE(f32_q.variant->reduced_precision);
  EXPECT_THAT(f32_q.reason, ::testing::Not(HasSubstr("rounded")));
  EXPECT_TRUE(find_text_variant("prefill_flash_coopmat_f16kv")->reduced_precision);  // the flash engine rounds it
  // bf16 K/V is staged as f16 times a power of two, exactly (8 mantissa bits
  // fit in 11): same row, no permission; f32 K/V would round, so it has none.
  // Chosen where the batch has 32 KV heads or more (it lost to decode_flash with fewer).
  auto bf16 = plan_text(nvidia(), decode(32, 8, 1, 128, 4096, DType::bf16, DType::bf16));
  EXPECT_EQ(bf16.variant->name, "decode_stream_coopmat_bf16");
  EXPECT_FALSE(bf16.variant->reduced_precision);
  EXPECT_EQ(plan_text(nvidia(), decode(4, 32, 8, 128, 4096, DType::f32, DType::bf16)).variant->name,
            "decode_stream_coopmat_bf16kv");
  EXPECT_EQ(plan_text(nvidia(), decode(1, 32, 8, 128, 4096, DType::bf16, DType::bf16)).variant->name,
            "decode_flash_bf16");
  EXPECT_EQ(plan_text(nvidia(), decode(16, 8, 1, 128, 4096, DType::bf16, DType::bf16)).variant->name,
            "decode_flash_bf16");
  EXPECT_EQ(find_text_variant("decode_stream_coopmat_f32"), nullptr);
  EXPECT_EQ(plan_text(nvidia(), decode(1, 32, 32, 128, 4096, DType::bf16, DType::bf16)).variant->name,
            "decode_flash_bf16");  // MHA: no query heads to share a tile
}

// The tensor-core stream rows need the 16x8x16 shape and the accumulator
// layout the probe checks; the planner names what is missing.
TEST(PlannerRules, StreamDecodeNamesWhatTheDeviceLacks) {
  const TextShape s = decode(1, 32, 8, 128, 4096, DType::f16, DType::f16);
  DeviceCaps no_16x8 = nvidia();
  std::erase_if(no_16x8.cooperative_matrix_shapes, [](const CoopMatrixShape& c) { return c.n == 8; });
  EXPECT_EQ(candidate(plan_text(no_16x8, s), "decode_stream_coopmat_f16").why,
            "needs VK_NV_cooperative_matrix with f16 16x8x16 -> f32, device has none");
  DeviceCaps other_layout = nvidia();
  other_layout.coop_accumulator_quad = false;
  EXPECT_THAT(candidate(plan_text(other_layout, s), "decode_stream_coopmat_f16").why,
              HasSubstr("mma.m16n8k16"));
  EXPECT_EQ(plan_text(other_layout, s).variant->name, "decode_flash_f16");
}

// Its tile and head columns are fixed; the split count is a tuning value.
TEST(PlannerRules, StreamDecodeTuningValues) {
  const TextShape s = decode(1, 32, 8, 128, 4096, DType::f16, DType::f16);
  PlanOptions o;
  o.splits = 5;
  EXPECT_EQ(plan_text(nvidia(), s, o).geometry.splits, 5u);
  o.splits = 0;
  o.tile_keys = 32;
  EXPECT_THAT(expect_error([&] { plan_text(nvidia(), s, o); }).what(),
              HasSubstr("tile_keys: expected 16 for decode_stream_coopmat_f16, got 32"));
  o.tile_keys = 0;
  o.rows = 16;
  EXPECT_THAT(expect_error([&] { plan_text(nvidia(), s, o); }).what(),
              HasSubstr("rows: expected 0 for decode_stream_coopmat_f16"));
}

// decode_stream_emulated: the same kernel in plain GLSL, chosen by override
// only; on lavapipe's 32 KiB of shared memory a D128 workgroup has 6 warps.
TEST(PlannerRules, EmulatedStreamDecodeByOverrideOnly) {
  const TextShape s = decode(1, 8, 2, 128, 700, DType::f16, DType::f16);
  auto p = plan_text(lavapipe(), s);
  EXPECT_EQ(p.variant->name, "decode_flash_f16");
  EXPECT_TRUE(candidate(p, "decode_stream_emulated_f16").eligible);
  EXPECT_EQ(candidate(p, "decode_stream_coopmat_f16").why,
            "needs VK_NV_cooperative_matrix with f16 16x16x16 -> f32, device has none");
  PlanOptions o;
  o.variant = "decode_stream_emulated_f16";
  o.strict = true;
  auto e = plan_text(lavapipe(), s, o);
  EXPECT_EQ(e.variant->module, "text_decode_stream_emulated");
  EXPECT_EQ(e.geometry.workgroup_size, 192u);
  EXPECT_LE(e.geometry.shared_bytes, 32768u);
}

// decode_flash_emulated: the same engine in plain GLSL, chosen by override only.
TEST(PlannerRules, EmulatedTensorCoreDecodeByOverrideOnly) {
  auto p = plan_text(lavapipe(), decode(1, 8, 2, 64, 700, DType::f16, DType::f16));
  EXPECT_EQ(p.variant->name, "decode_flash_f16");
  EXPECT_TRUE(candidate(p, "decode_flash_emulated_f16").eligible);
  PlanOptions o;
  o.variant = "decode_flash_emulated_f16";
  o.strict = true;
  auto e = plan_text(lavapipe(), decode(1, 8, 2, 64, 700, DType::f16, DType::f16), o);
  EXPECT_EQ(e.variant->module, "flash_coopmat_emulated");
  EXPECT_EQ(e.geometry.splits, 2u);  // no compute-unit count: 512 keys per split
}

// decode_flash on lavapipe (subgroups of 8, 32 KiB): D128 f32 rows take 8 lanes
// x 4 words, so one head per workgroup keeps the merge inside shared memory;
// splits by length (no compute-unit count).
TEST(PlannerRules, FlashDecodeOnLavapipe) {
  auto p = plan_text(lavapipe(), decode(1, 32, 8, 128, 4096));
  EXPECT_EQ(p.variant->name, "decode_flash_f32");
  EXPECT_EQ(p.geometry.key_lanes, 8u);
  EXPECT_EQ(p.geometry.acc_chunks, 4u);
  EXPECT_EQ(p.geometry.head_group, 1u);
  EXPECT_LE(p.geometry.shared_bytes, 32768u);
  EXPECT_EQ(p.geometry.splits, 8u);
  auto older = plan_text(without_flash_decode(lavapipe()), decode(1, 32, 8, 128, 4096));
  EXPECT_EQ(candidate(older, "decode_flash_f32").why, "needs subgroup shuffles in compute shaders, device has none");
}

// Lengths from a GPU buffer: the grid is sized for the cache's capacity, and
// the kernel hands each split its share of the real length at run time.
TEST(PlannerRules, FlashDecodeSplitsForTheCapacityBound) {
  TextShape s = decode(1, 32, 8, 128, 1024, DType::f32, DType::f32);
  const uint32_t at_hint = plan_text(nvidia(), s).geometry.splits;
  s.kv_len_bound = 131072;
  const uint32_t at_bound = plan_text(nvidia(), s).geometry.splits;
  EXPECT_EQ(at_hint, 32u);   // 1024 keys: 32 steps of 32 (4 keys for each of 8 warps)
  EXPECT_EQ(at_bound, 33u);  // 2 x 132 SMs / 8 workgroups per split, rounded down
}

// Tuning keys per step is bounded by the registers a lane holds.
TEST(PlannerRules, FlashDecodeTileKeysBoundedByRegisters) {
  PlanOptions o;
  o.tile_keys = 16;
  EXPECT_EQ(plan_text(nvidia(), decode(1, 32, 8, 128, 4096, DType::f32, DType::f32), o).geometry.tile_keys, 16u);
  o.tile_keys = 32;
  Error e = expect_error([&] { plan_text(nvidia(), decode(1, 32, 8, 128, 4096, DType::f32, DType::f32), o); });
  EXPECT_THAT(e.what(), HasSubstr("tile_keys: expected at most 16 for head_dim 128"));
}

// Selects decode_online_split: NVIDIA H200, Llama-3-8B decode, one sequence.
TEST(PlannerRules, SplitKvForLongDecodeOnNvidia) {
  auto p = plan_text(without_flash_decode(nvidia()), decode(1, 32, 8, 128, 4096, DType::f32, DType::f16));
  EXPECT_EQ(p.variant->name, "decode_online_split_f16kv");
  EXPECT_THAT(p.reason, StartsWith("split_kv"));
  // 4096 keys in chunks of at most 128: 32 splits.
  EXPECT_EQ(p.geometry.head_group, 4u);
  EXPECT_EQ(p.geometry.splits, 32u);
  EXPECT_EQ(p.geometry.required_subgroup_size, 32u);
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_TRUE(candidate(p, "decode_split_f16kv").eligible);
}

// Selects decode_online_split on lavapipe: splits by length alone.
TEST(PlannerRules, SplitKvOnLavapipeByLength) {
  auto p = plan_text(without_flash_decode(lavapipe()), decode(1, 32, 8, 128, 4096));
  EXPECT_EQ(p.variant->name, "decode_online_split_f32");
  EXPECT_THAT(p.reason, StartsWith("split_kv"));
  EXPECT_EQ(p.geometry.splits, 32u);
}

// The split threshold: more than one 128-key chunk. H8/8 D64 on lavapipe.
TEST(PlannerRules, SplitNeedsMoreThanOneChunk) {
  auto shorter = plan_text(without_flash_decode(lavapipe()), decode(1, 8, 8, 64, 128));
  EXPECT_EQ(shorter.variant->name, "decode_online_f32");
  EXPECT_EQ(shorter.geometry.splits, 1u);
  auto longer = plan_text(without_flash_decode(lavapipe()), decode(1, 8, 8, 64, 129));
  EXPECT_EQ(longer.variant->name, "decode_online_split_f32");
  EXPECT_EQ(longer.geometry.splits, 2u);
}

// Selects decode_split: a device without subgroup arithmetic, underfilled and long.
TEST(PlannerRules, SharedTileSplitWithoutSubgroupOps) {
  auto p = plan_text(no_subgroup(), decode(1, 32, 8, 128, 4096));
  EXPECT_EQ(p.variant->name, "decode_split_f32");
  EXPECT_EQ(p.reason, "split_kv: the KV spans several chunks");
  EXPECT_EQ(p.geometry.splits, 32u);
  EXPECT_EQ(candidate(p, "decode_online_split_f32").why,
            "needs subgroup arithmetic in compute shaders, device has none");
}

// Selects decode_split on lavapipe: D256 is past registers_online's 16 x subgroup size.
TEST(PlannerRules, SharedTileSplitPastRegisterHeadDims) {
  auto p = plan_text(without_flash_decode(lavapipe()), decode(1, 8, 8, 256, 4096));
  EXPECT_EQ(p.variant->name, "decode_split_f32");
  EXPECT_EQ(candidate(p, "decode_online_split_f32").why, "needs head_dim <= 128 for subgroup size 8");
  EXPECT_THAT(plan_text(without_flash_decode(nvidia()), decode(1, 8, 8, 256, 4096)).variant->name, StartsWith("decode_online_split"));
}

// Selects decode_online: lavapipe, KV too short to split.
TEST(PlannerRules, SubgroupOnlineForShortDecodeOnLavapipe) {
  auto p = plan_text(without_flash_decode(lavapipe()), decode(1, 32, 8, 128, 16));
  EXPECT_EQ(p.variant->name, "decode_online_f32");
  EXPECT_THAT(p.reason, StartsWith("subgroup_online"));
  EXPECT_EQ(p.geometry.splits, 1u);
  EXPECT_EQ(p.geometry.required_subgroup_size, 8u);
  EXPECT_EQ(p.geometry.workgroup_size % 8, 0u);
}

// Selects decode_online for a short KV whatever the batch; a long KV splits
// even when the batch alone fills the device.
TEST(PlannerRules, SubgroupOnlineForShortKvSplitForLong) {
  auto lp = plan_text(without_flash_decode(lavapipe()), decode(16, 32, 8, 128, 128));
  EXPECT_EQ(lp.variant->name, "decode_online_f32");
  auto nv = plan_text(without_flash_decode(nvidia()), decode(64, 32, 8, 128, 100, DType::f16, DType::f16));
  EXPECT_EQ(nv.variant->name, "decode_online_f16");
  EXPECT_EQ(nv.geometry.required_subgroup_size, 32u);
  auto nv_long = plan_text(without_flash_decode(nvidia()), decode(64, 32, 8, 128, 4096, DType::f16, DType::f16));
  EXPECT_EQ(nv_long.variant->name, "decode_online_split_f16");
  EXPECT_EQ(nv_long.geometry.splits, 32u);
}

// Selects decode_online on the AMD-like device with a wave64 requirement.
TEST(PlannerRules, AmdLikeUsesWave64WithSizeControl) {
  auto p = plan_text(without_flash_decode(amd_like()), decode(32, 32, 8, 128, 128, DType::f32, DType::bf16));
  EXPECT_EQ(p.variant->name, "decode_online_bf16kv");
  EXPECT_THAT(p.reason, StartsWith("subgroup_online"));
  EXPECT_EQ(p.geometry.required_subgroup_size, 64u);
  EXPECT_EQ(p.geometry.workgroup_size % 64, 0u);
  auto under = plan_text(without_flash_decode(amd_like()), decode(1, 32, 8, 128, 4096, DType::f32, DType::bf16));
  EXPECT_EQ(under.variant->name, "decode_online_split_bf16kv");
  EXPECT_EQ(under.geometry.splits, 32u);
  EXPECT_EQ(under.geometry.required_subgroup_size, 64u);
}

// Selects decode_subgroup: lavapipe D256 (registers_online stops at 16 x 8), short KV.
TEST(PlannerRules, SubgroupCapableWhenRegistersCannotHoldTheRow) {
  auto p = plan_text(without_flash_decode(lavapipe()), decode(1, 8, 8, 256, 16));
  EXPECT_EQ(p.variant->name, "decode_subgroup_f32");
  EXPECT_EQ(p.reason, "subgroup_capable");
  EXPECT_EQ(p.geometry.required_subgroup_size, 8u);
  EXPECT_EQ(p.geometry.tile_keys, 8u);  // 16 keys of D256 need 34192 B > 32768 B
  EXPECT_FALSE(candidate(p, "decode_online_f32").eligible);
}

// Selects decode_streaming: varying subgroup sizes without size control.
TEST(PlannerRules, VaryingSubgroupSizeWithoutControlFallsBackToStreaming) {
  DeviceCaps c = amd_like();
  c.subgroup_size_control = false;
  auto p = plan_text(c, decode(32, 32, 8, 64, 128));
  EXPECT_EQ(p.variant->name, "decode_streaming_f32");
  EXPECT_EQ(p.reason, "decode_streaming_fallback");
  for (const char* v : {"decode_subgroup_f32", "decode_online_f32", "decode_online_split_f32"}) {
    EXPECT_THAT(candidate(p, v).why, HasSubstr("needs a fixed subgroup size")) << v;
    EXPECT_FALSE(candidate(p, v).eligible) << v;
  }
}

// Selects decode_streaming: a device without subgroup arithmetic, batch filling it.
TEST(PlannerRules, DecodeStreamingFallbackWithoutSubgroupOps) {
  auto p = plan_text(no_subgroup(), decode(32, 32, 8, 64, 128));  // one chunk: no split; below chunked's 128
  EXPECT_EQ(p.variant->name, "decode_streaming_f32");
  EXPECT_EQ(p.reason, "decode_streaming_fallback");
  EXPECT_EQ(p.geometry.required_subgroup_size, 0u);
  EXPECT_EQ(candidate(p, "decode_subgroup_f32").why, "needs subgroup arithmetic in compute shaders, device has none");
  EXPECT_EQ(candidate(p, "decode_online_f32").why, "needs subgroup arithmetic in compute shaders, device has none");
  EXPECT_TRUE(candidate(p, "decode_split_f32").eligible);
  EXPECT_TRUE(candidate(p, "decode_streaming_f32").eligible);
}

TEST(PlannerRules, SubgroupSizeThatDoesNotDivideTheWorkgroupIsIneligible) {
  DeviceCaps c = no_subgroup();
  c.subgroup_arithmetic = true;
  c.subgroup_size = c.min_subgroup_size = c.max_subgroup_size = 256;
  auto p = plan_text(c, decode(32, 32, 8, 64, 64));
  EXPECT_EQ(p.variant->name, "decode_streaming_f32");
  EXPECT_THAT(candidate(p, "decode_subgroup_f32").why, HasSubstr("subgroup size 256 does not divide 128"));
}

// Selects decode_chunked on the 16 KiB device: D512 shared tiles would hold 2
// keys; lanes across the head dimension need no tiles.
TEST(PlannerRules, DecodeChunkedWhenSharedMemoryTooSmallForTiles) {
  auto p = plan_text(small_shared(), decode(1, 4, 4, 512, 4096));
  EXPECT_EQ(p.variant->name, "decode_chunked_f32");
  EXPECT_THAT(p.reason, StartsWith("chunked"));
  EXPECT_THAT(candidate(p, "decode_split_f32").why, HasSubstr("bytes of shared memory"));
  EXPECT_THAT(candidate(p, "decode_split_f32").why, HasSubstr("device has 16384"));
  EXPECT_LE(p.geometry.shared_bytes, 16384u);
  EXPECT_EQ(p.geometry.workgroup_size, 128u);  // D/4 lanes
  EXPECT_TRUE(candidate(p, "decode_streaming_f32").eligible);
}

// On a 4 KiB device with subgroups: merging four subgroups' D256 rows needs
// 4128 B, the shared-tile variants more; decode_chunked's one group fits.
TEST(PlannerRules, RegistersOnlineNeedsSharedMemoryToMerge) {
  DeviceCaps c = without_flash_decode(amd_like());
  c.subgroup_size = c.min_subgroup_size = c.max_subgroup_size = 32;
  c.max_shared_memory_bytes = 4096;
  auto p = plan_text(c, decode(64, 8, 8, 256, 4096));
  EXPECT_EQ(p.variant->name, "decode_chunked_f32");
  EXPECT_EQ(candidate(p, "decode_online_f32").why, "needs 4128 bytes of shared memory to merge subgroups, device has 4096");
  EXPECT_THAT(candidate(p, "decode_subgroup_f32").why, HasSubstr("device has 4096"));
}

TEST(PlannerRules, WorkgroupShrinksToDeviceLimit) {
  DeviceCaps c = no_subgroup();
  c.max_workgroup_invocations = 96;  // not a power of two: 64
  auto p = plan_text(c, decode(32, 32, 8, 64, 64));
  EXPECT_EQ(p.geometry.workgroup_size, 64u);
}

// ---- prefill rules ----------------------------------------------------------

// Selects prefill_tiled_large: lavapipe, D64.
TEST(PlannerRules, TiledLargeForHeadDimUpTo64) {
  auto p = plan_text(lavapipe(), prefill(128, 8, 8, 64));
  EXPECT_EQ(p.variant->name, "prefill_tiled_large_f32");
  EXPECT_EQ(p.reason, "tiled_large_capable");
  EXPECT_EQ(p.geometry.q_pos, 32u);
  EXPECT_EQ(p.geometry.rows(), 32u);
  // Short prompts get no more query positions than they have.
  EXPECT_EQ(plan_text(lavapipe(), prefill(5, 8, 8, 64)).geometry.q_pos, 8u);
  // GQA heads share the workgroup's rows: 4 heads x 8 positions.
  auto gqa = plan_text(lavapipe(), prefill(128, 8, 2, 64));
  EXPECT_EQ(gqa.geometry.head_group, 4u);
  EXPECT_EQ(gqa.geometry.q_pos, 8u);
}

// Selects prefill_tiled_small: lavapipe, D128 and D256.
TEST(PlannerRules, TiledSmallForHeadDimUpTo256) {
  auto p = plan_text(lavapipe(), prefill(128, 8, 8, 128, DType::f16, DType::f16));
  EXPECT_EQ(p.variant->name, "prefill_tiled_small_f16");
  EXPECT_EQ(p.reason, "tiled_small_capable");
  EXPECT_EQ(candidate(p, "prefill_tiled_large_f16").why, "needs head_dim <= 64, got 128");
  EXPECT_EQ(plan_text(lavapipe(), prefill(128, 8, 8, 256)).variant->name, "prefill_tiled_small_f32");
}

// Selects prefill_streaming: lavapipe, D384 is past tiled_small's limit.
TEST(PlannerRules, StreamingFallbackPastTiledHeadDims) {
  auto p = plan_text(lavapipe(), prefill(128, 8, 8, 384, DType::bf16, DType::bf16));
  EXPECT_EQ(p.variant->name, "prefill_streaming_bf16");
  EXPECT_EQ(p.reason, "streaming_fallback");
  EXPECT_EQ(candidate(p, "prefill_tiled_small_bf16").why, "needs head_dim <= 256, got 384");
}

// Selects prefill_streaming: 16 KiB of shared memory cannot hold D256 tiles;
// the same shape on lavapipe (32 KiB) runs tiled_small.
TEST(PlannerRules, StreamingFallbackWhenSharedMemoryTooSmall) {
  auto p = plan_text(small_shared(), prefill(128, 8, 8, 256));
  EXPECT_EQ(p.variant->name, "prefill_streaming_f32");
  EXPECT_EQ(p.reason, "streaming_fallback");
  EXPECT_THAT(candidate(p, "prefill_tiled_small_f32").why, HasSubstr("device has 16384"));
  EXPECT_EQ(p.geometry.tile_keys, 4u);
  // D64: tiled_large's 32 rows need 19264 B, so tiled_small takes it.
  auto d64 = plan_text(small_shared(), prefill(128, 8, 8, 64));
  EXPECT_EQ(d64.variant->name, "prefill_tiled_small_f32");
  EXPECT_THAT(candidate(d64, "prefill_tiled_large_f32").why, HasSubstr("needs 19264 bytes of shared memory"));
}

// ---- tensor-core prefill ------------------------------------------------------

// Selects prefill_flash_coopmat: NVIDIA H200, Llama-3-8B prefill at S4096.
TEST(PlannerFlash, TensorCoresForF16PrefillOnNvidia) {
  auto p = plan_text(nvidia(), prefill(4096, 32, 8, 128, DType::f16, DType::f16));
  EXPECT_EQ(p.variant->name, "prefill_flash_coopmat_f16");
  EXPECT_THAT(p.reason, StartsWith("tensor_cores"));
  EXPECT_EQ(p.variant->module, "flash_coopmat");
  // 8 warps of 32 own 128 rows: the 4 GQA heads of a KV head x 32 positions;
  // 64-key tiles in one buffer of K and V are what 48 KiB holds next to the
  // warps' scratch (two buffers would hold 32-key tiles).
  EXPECT_EQ(p.geometry.workgroup_size, 256u);
  EXPECT_EQ(p.geometry.head_group, 4u);
  EXPECT_EQ(p.geometry.q_pos, 32u);
  EXPECT_EQ(p.geometry.tile_keys, 64u);
  EXPECT_EQ(p.geometry.kv_stages, 1u);
  EXPECT_EQ(p.geometry.required_subgroup_size, 32u);
  EXPECT_EQ(p.geometry.shared_bytes, fragment_shared_bytes(128, 128, 64, 1));
  EXPECT_GT(fragment_shared_bytes(128, 128, 64, 2), 49152u);
  EXPECT_EQ(public_view(p).geometry.kv_stages, 1u);
  EXPECT_THAT(explain(p), HasSubstr("tile_keys 64, "));
  EXPECT_THAT(explain(p), HasSubstr("kv_stages 1"));
  EXPECT_LE(p.geometry.shared_bytes, 49152u);
  EXPECT_TRUE(candidate(p, "prefill_tiled_small_f16").eligible);
}

// The coopmat fragment layer assumes mma.m16n8k16's accumulator layout: a
// device whose context did not find it gets the scalar rows, with the reason.
TEST(PlannerFlash, TensorCoresNeedTheQuadAccumulatorLayout) {
  DeviceCaps other = nvidia();
  other.coop_accumulator_quad = false;
  auto p = plan_text(other, prefill(4096, 32, 8, 128, DType::f16, DType::f16));
  EXPECT_NE(p.variant->module, "flash_coopmat");
  const auto& c = candidate(p, "prefill_flash_coopmat_f16");
  EXPECT_FALSE(c.eligible);
  EXPECT_THAT(c.why, HasSubstr("mma.m16n8k16"));
}

TEST(PlannerFlash, KeyTileSizedFromSharedMemoryPerHeadDim) {
  // Most rows first (128, then 64), then the largest key tile that fits 48 KiB,
  // in two buffers where they fit, else in one.
  struct Want {
    uint32_t d, rows, tk, stages;
  };
  for (auto [d, rows, tk, stages] : {Want{64, 128, 64, 2}, Want{80, 128, 64, 1}, Want{96, 128, 64, 1},
                                     Want{128, 128, 64, 1}, Want{256, 64, 32, 1}}) {
    auto p = plan_text(nvidia(), prefill(2048, 16, 16, d, DType::f16, DType::f16));
    EXPECT_EQ(p.variant->name, "prefill_flash_coopmat_f16") << d;
    EXPECT_EQ(p.geometry.tile_keys, tk) << d;
    EXPECT_EQ(p.geometry.kv_stages, stages) << d;
    EXPECT_EQ(p.geometry.head_group, 1u) << d;
    EXPECT_EQ(p.geometry.q_pos, rows) << d;
    EXPECT_LE(p.geometry.shared_bytes, 49152u) << d;
  }
  // Two buffers of K and V rows in 16-byte words padded by one, a scratch row
  // of 16 f32 padded by one word per query row, 4 bytes of state per key of each buffer and 4 per query row,
  // and 16 for the largest |k| and |v| of two tiles (bf16 staging).
  EXPECT_EQ(fragment_shared_bytes(64, 128, 32, 2), (2 * 2 * 32 * 17 + 64 * 5) * 16 + 2 * 32 * 4 + 64 * 4 + 16);
}

TEST(PlannerFlash, F32QueriesNeedTheReducedPrecisionOptIn) {
  auto p = plan_text(nvidia(), prefill(4096, 32, 8, 128, DType::f32, DType::f16));
  EXPECT_EQ(p.variant->name, "prefill_tiled_small_f16kv");
  EXPECT_FALSE(candidate(p, "prefill_flash_coopmat_f16kv").eligible);
  EXPECT_EQ(candidate(p, "prefill_flash_coopmat_f16kv").why, "rounds f32 Q to f16; needs allow_reduced_precision");
  PlanOptions o;
  o.allow_reduced_precision = true;
  auto r = plan_text(nvidia(), prefill(4096, 32, 8, 128, DType::f32, DType::f16), o);
  EXPECT_EQ(r.variant->name, "prefill_flash_coopmat_f16kv");
  EXPECT_THAT(r.reason, HasSubstr("Q rounded to f16 (allow_reduced_precision)"));
  EXPECT_TRUE(candidate(r, "prefill_flash_coopmat_f16kv").eligible);
  // f16 inputs lose nothing: no opt-in needed.
  EXPECT_FALSE(find_text_variant("prefill_flash_coopmat_f16")->reduced_precision);
}

// bf16 is staged as f16 times powers of two (exact: its mantissa fits), so
// bf16 prefill runs on tensor cores without the opt-in; f32 Q with bf16 K/V
// is rounded, so it needs it, like f16 K/V's row. f32 K/V stays scalar.
TEST(PlannerFlash, Bf16OnTensorCoresF32KvOnTheScalarRows) {
  auto bf16 = plan_text(nvidia(), prefill(4096, 32, 8, 128, DType::bf16, DType::bf16));
  EXPECT_EQ(bf16.variant->name, "prefill_flash_coopmat_bf16");
  EXPECT_FALSE(bf16.variant->reduced_precision);
  EXPECT_TRUE(find_text_variant("prefill_flash_coopmat_bf16kv")->reduced_precision);
  EXPECT_EQ(plan_text(nvidia(), prefill(4096, 32, 8, 128, DType::f32, DType::bf16)).variant->name,
            "prefill_tiled_small_bf16kv");
  PlanOptions o;
  o.allow_reduced_precision = true;
  EXPECT_EQ(plan_text(nvidia(), prefill(4096, 32, 8, 128, DType::f32, DType::bf16), o).variant->name,
            "prefill_flash_coopmat_bf16kv");
  EXPECT_EQ(plan_text(nvidia(), prefill(4096, 32, 8, 128)).variant->name, "prefill_tiled_small_f32");
  EXPECT_EQ(find_text_variant("prefill_flash_coopmat_f32"), nullptr);
  EXPECT_EQ(find_text_variant("prefill_flash_emulated_f32"), nullptr);
}

TEST(PlannerFlash, HeadDimOffSixteenIsPaddedToWholeFragments) {
  auto p = plan_text(nvidia(), prefill(512, 8, 8, 72, DType::f16, DType::f16));
  EXPECT_EQ(p.variant->name, "prefill_flash_coopmat_f16");
  // Shared memory holds rows padded to 80 columns.
  EXPECT_EQ(fragment_shared_bytes(128, 72, 64, 2), fragment_shared_bytes(128, 80, 64, 2));
  EXPECT_EQ(fragment_geometry(*find_text_variant("prefill_flash_coopmat_f16"), nvidia(),
                              prefill(512, 8, 8, 12, DType::f16, DType::f16))
                .reason,
            "needs head_dim a multiple of 8, got 12");
}

// Selects prefill_flash_emulated (by override only): lavapipe, D128.
TEST(PlannerFlash, EmulatedRowsRunAnywhereByOverrideOnly) {
  auto p = plan_text(lavapipe(), prefill(128, 8, 2, 128, DType::f16, DType::f16));
  EXPECT_EQ(p.variant->name, "prefill_tiled_small_f16");
  EXPECT_EQ(candidate(p, "prefill_flash_coopmat_f16").why,
            "needs VK_NV_cooperative_matrix with f16 16x16x16 -> f32, device has none");
  EXPECT_TRUE(candidate(p, "prefill_flash_emulated_f16").eligible);
  PlanOptions o;
  o.variant = "prefill_flash_emulated_f16";
  o.strict = true;
  auto e = plan_text(lavapipe(), prefill(128, 8, 2, 128, DType::f16, DType::f16), o);
  EXPECT_EQ(e.variant->module, "flash_coopmat_emulated");
  EXPECT_EQ(e.geometry.tile_keys, 32u);  // 32 KiB of shared memory: one buffer of 32 keys
  EXPECT_EQ(e.geometry.kv_stages, 1u);
  EXPECT_EQ(e.geometry.required_subgroup_size, 0u);
  EXPECT_EQ(e.geometry.head_group, 4u);
  // D256 K/V rows of 16 keys for 16 query rows do not fit in 16 KiB.
  DeviceCaps tiny = lavapipe();
  tiny.max_shared_memory_bytes = 16384;
  Error err = expect_error([&] { plan_text(tiny, prefill(128, 8, 2, 256, DType::f16, DType::f16), o); });
  EXPECT_THAT(err.what(), HasSubstr("device has 16384"));
}

TEST(PlannerFlash, TileKeysOverride) {
  PlanOptions o;
  o.tile_keys = 16;
  EXPECT_EQ(plan_text(nvidia(), prefill(4096, 32, 8, 128, DType::f16, DType::f16), o).geometry.tile_keys, 16u);
  o.tile_keys = 64;  // D128: one buffer of 64 keys fits, D256: none does
  EXPECT_EQ(plan_text(nvidia(), prefill(4096, 32, 8, 128, DType::f16, DType::f16), o).geometry.kv_stages, 1u);
  Error big = expect_error([&] { plan_text(nvidia(), prefill(4096, 32, 8, 256, DType::f16, DType::f16), o); });
  EXPECT_EQ(big.kind(), ErrorKind::unsupported);
  EXPECT_THAT(big.what(), HasSubstr("tile_keys"));
  o.tile_keys = 8;
  Error small = expect_error([&] { plan_text(nvidia(), prefill(4096, 32, 8, 128, DType::f16, DType::f16), o); });
  EXPECT_EQ(small.kind(), ErrorKind::invalid_argument);
}

// prefill_flash_coopmat2 needs VK_NV_cooperative_matrix2 (and a build with a
// glslang that compiles it), contiguous K/V within one binding and f16 or f32
// output; its plain-GLSL build runs anywhere, by override only.
TEST(PlannerRules, WorkgroupMatricesNeedTheExtensionAndContiguousKv) {
  const DeviceCaps h200 = load_caps_file(testing::caps_path("nvidia-h200.json"));
  auto p = plan_text(h200, prefill(4096, 32, 8, 128, DType::f16, DType::f16));
  EXPECT_FALSE(candidate(p, "prefill_flash_coopmat2_f16").eligible);
  EXPECT_THAT(candidate(p, "prefill_flash_coopmat2_f16").why, HasSubstr("cooperative_matrix2"));
  EXPECT_EQ(p.variant->name, "prefill_flash_coopmat_f16");

  TextShape ring = prefill(64, 8, 2, 128, DType::f16, DType::f16);
  ring.contiguous = false;
  const TextVariant* emulated = find_text_variant("prefill_flash_wg_emulated_f16");
  ASSERT_NE(emulated, nullptr);
  EXPECT_THAT(text_geometry(*emulated, lavapipe(), ring).reason, HasSubstr("needs contiguous K/V"));
  TextShape pooled = prefill(64, 8, 2, 128, DType::f16, DType::f16);
  pooled.kv_by_address = true;
  EXPECT_THAT(text_geometry(*emulated, lavapipe(), pooled).reason, HasSubstr("one storage-buffer binding"));
  TextShape bf16_out = prefill(64, 8, 2, 128, DType::f16, DType::f16);
  bf16_out.out = DType::bf16;
  EXPECT_THAT(text_geometry(*emulated, lavapipe(), bf16_out).reason, HasSubstr("f16 or f32 output"));
  EXPECT_EQ(find_text_variant("prefill_flash_coopmat2_bf16"), nullptr);  // f16 K/V as stored, only
  EXPECT_EQ(find_text_variant("prefill_flash_coopmat2_f32"), nullptr);

  auto e = plan_text(lavapipe(), prefill(64, 8, 2, 72, DType::f16, DType::f16));
  EXPECT_NE(e.variant->family, "prefill_flash_wg_emulated");  // override only
  EXPECT_TRUE(candidate(e, "prefill_flash_wg_emulated_f16").eligible);
  PlanOptions o;
  o.variant = "prefill_flash_wg_emulated_f16";
  auto forced = plan_text(lavapipe(), prefill(64, 8, 2, 72, DType::f16, DType::f16), o);
  EXPECT_EQ(forced.variant->module, "flash_workgroup_emulated");
  EXPECT_EQ(forced.geometry.q_pos, 16u);
  EXPECT_EQ(forced.geometry.head_group, 1u);
  EXPECT_EQ(forced.geometry.workgroup_size, 128u);
  EXPECT_LE(forced.geometry.shared_bytes, lavapipe().max_shared_memory_bytes);
  // 64 rows over a head dim padded to 80 with 16-key tiles: 1280 elements of K^T for 512 invocations.
  o.rows = 64;
  EXPECT_THAT(expect_error([&] { plan_text(lavapipe(), prefill(64, 8, 2, 72, DType::f16, DType::f16), o); }).what(),
              HasSubstr("divide among 512 invocations"));
}

TEST(PlannerRules, CandidatesAreTheRowsOfThePhaseAndDtypes) {
  auto p = plan_text(lavapipe(), decode(1, 8, 8, 64, 100, DType::f32, DType::f16));
  std::vector<std::string> want;
  for (const auto& v : text_variants())
    if (v.phase == Phase::decode && v.q == DType::f32 && v.kv == DType::f16) want.push_back(v.name);
  ASSERT_EQ(p.candidates.size(), want.size());
  ASSERT_GE(want.size(), 5u);
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(p.candidates[i].variant, want[i]);
    EXPECT_THAT(want[i], ::testing::EndsWith("_f16kv"));
  }
  auto q = plan_text(lavapipe(), prefill(100, 8, 8, 64, DType::f32, DType::f16));
  ASSERT_EQ(q.candidates.size(), 7u);  // three scalar rows, two flash rows, two workgroup-matrix rows
  for (const auto& c : q.candidates) EXPECT_THAT(c.variant, StartsWith("prefill_"));
}

TEST(PlannerRules, HeadDimNotMultipleOf8HasNoVariant) {
  Error e = expect_error([] { plan_text(lavapipe(), decode(1, 8, 8, 12, 100)); });
  EXPECT_EQ(e.kind(), ErrorKind::unsupported);
  EXPECT_THAT(e.what(), HasSubstr("no variant can run head_dim 12"));
  EXPECT_THAT(e.what(), HasSubstr("needs head_dim a multiple of 8, got 12"));
  EXPECT_THAT(e.what(), HasSubstr("llvmpipe"));
  Error big = expect_error([] { plan_text(lavapipe(), prefill(16, 8, 8, 520)); });
  EXPECT_THAT(big.what(), HasSubstr("needs head_dim <= 512, got 520"));
}

TEST(PlannerRules, BadShapeIsAnInvalidArgumentNotACrash) {
  Error e = expect_error([] { plan_text(lavapipe(), decode(1, 8, 0, 64, 100)); });
  EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
  EXPECT_THAT(e.what(), HasSubstr("num_kv_heads: expected >= 1, got 0"));
  Error g = expect_error([] { plan_text(lavapipe(), decode(1, 6, 4, 64, 100)); });
  EXPECT_EQ(g.kind(), ErrorKind::invalid_argument);
  EXPECT_THAT(g.what(), HasSubstr("num_heads: expected a positive multiple of num_kv_heads (4), got 6"));
  Error b = expect_error([] { plan_text(lavapipe(), decode(0, 8, 8, 64, 100)); });
  EXPECT_THAT(b.what(), HasSubstr("batch: expected >= 1, got 0"));
}

// ---- overrides --------------------------------------------------------------

TEST(PlannerOverride, ForcedEligibleVariantWins) {
  PlanOptions o;
  o.variant = "decode_streaming_f32";
  auto p = plan_text(lavapipe(), decode(1, 32, 8, 128, 4096), o);  // the rules would split
  EXPECT_EQ(p.variant->name, "decode_streaming_f32");
  EXPECT_EQ(p.reason, "override");
  EXPECT_TRUE(p.warnings.empty());
  o.strict = true;
  EXPECT_EQ(plan_text(lavapipe(), decode(1, 32, 8, 128, 4096), o).variant->name, "decode_streaming_f32");
}

TEST(PlannerOverride, IneligibleNonStrictFallsBackWithOneWarning) {
  PlanOptions o;
  o.variant = "decode_subgroup_f32";
  auto p = plan_text(no_subgroup(), decode(32, 32, 8, 64, 128), o);
  EXPECT_EQ(p.variant->name, "decode_streaming_f32");
  EXPECT_THAT(p.reason, StartsWith("override_fallback"));
  EXPECT_EQ(p.reason, "override_fallback: decode_streaming_fallback");
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_THAT(p.warnings[0], HasSubstr("'decode_subgroup_f32' rejected: needs subgroup arithmetic"));
  EXPECT_THAT(p.warnings[0], HasSubstr("falling back"));
}

TEST(PlannerOverride, IneligibleStrictThrowsNamingVariantAndReason) {
  PlanOptions o;
  o.variant = "decode_subgroup_f32";
  o.strict = true;
  Error e = expect_error([&] { plan_text(no_subgroup(), decode(32, 32, 8, 128, 4096), o); });
  EXPECT_EQ(e.kind(), ErrorKind::unsupported);
  EXPECT_THAT(e.what(), HasSubstr("decode_subgroup_f32"));
  EXPECT_THAT(e.what(), HasSubstr("needs subgroup arithmetic in compute shaders, device has none"));
}

TEST(PlannerOverride, UnknownVariantName) {
  PlanOptions o;
  o.variant = "nosuch";
  auto p = plan_text(without_flash_decode(lavapipe()), decode(1, 32, 8, 128, 16), o);
  EXPECT_EQ(p.variant->name, "decode_online_f32");
  EXPECT_THAT(p.reason, StartsWith("override_fallback: subgroup_online"));
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_THAT(p.warnings[0], HasSubstr("got 'nosuch'"));
  o.strict = true;
  Error e = expect_error([&] { plan_text(without_flash_decode(lavapipe()), decode(1, 32, 8, 128, 16), o); });
  EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
  EXPECT_THAT(e.what(), HasSubstr("variant: expected a text variant name"));
  EXPECT_THAT(e.what(), HasSubstr("'nosuch'"));
}

TEST(PlannerOverride, DtypeMismatchedOverrideIsRejected) {
  PlanOptions o;
  o.variant = "decode_split_f16";
  o.strict = true;
  Error e = expect_error([&] { plan_text(without_flash_decode(nvidia()), decode(1, 32, 8, 128, 4096, DType::f32, DType::f16), o); });
  EXPECT_EQ(e.kind(), ErrorKind::unsupported);
  EXPECT_THAT(e.what(), HasSubstr("'decode_split_f16' rejected: takes Q=f16 KV=f16, call has Q=f32 KV=f16"));
  o.strict = false;
  auto p = plan_text(without_flash_decode(nvidia()), decode(1, 32, 8, 128, 4096, DType::f32, DType::f16), o);
  EXPECT_EQ(p.variant->name, "decode_online_split_f16kv");
  EXPECT_EQ(p.warnings.size(), 1u);
}

TEST(PlannerOverride, PhaseMismatchedOverrideIsRejected) {
  PlanOptions o;
  o.variant = "prefill_tiled_large_f32";
  o.strict = true;
  Error e = expect_error([&] { plan_text(lavapipe(), decode(1, 8, 8, 64, 100), o); });
  EXPECT_THAT(e.what(), HasSubstr("'prefill_tiled_large_f32' rejected: prefill-only, call is decode"));
}

TEST(PlannerOverride, ForcedVariantHeadDimLimit) {
  PlanOptions o;
  o.variant = "prefill_tiled_large_f32";
  o.strict = true;
  Error e = expect_error([&] { plan_text(lavapipe(), prefill(128, 8, 8, 128), o); });
  EXPECT_EQ(e.kind(), ErrorKind::unsupported);
  EXPECT_THAT(e.what(), HasSubstr("'prefill_tiled_large_f32' rejected: needs head_dim <= 64, got 128"));
}

TEST(PlannerOverride, KernelPathByPhase) {
  PlanOptions o;
  o.path = {{Phase::prefill, {}, "prefill_streaming_f32"}, {Phase::decode, {}, "decode_streaming_f32"}};
  auto d = plan_text(without_flash_decode(lavapipe()), decode(1, 32, 8, 128, 4096), o);
  EXPECT_EQ(d.variant->name, "decode_streaming_f32");
  EXPECT_EQ(d.reason, "override");
  auto p = plan_text(without_flash_decode(lavapipe()), prefill(128, 8, 8, 64), o);
  EXPECT_EQ(p.variant->name, "prefill_streaming_f32");
  EXPECT_EQ(p.reason, "override");
  // A path for the other phase only leaves this call to the rules.
  PlanOptions prefill_only;
  prefill_only.path = {{Phase::prefill, {}, "prefill_streaming_f32"}};
  auto d2 = plan_text(without_flash_decode(lavapipe()), decode(1, 32, 8, 128, 4096), prefill_only);
  EXPECT_EQ(d2.variant->name, "decode_online_split_f32");
  EXPECT_THAT(d2.reason, StartsWith("split_kv"));
  EXPECT_TRUE(d2.warnings.empty());
}

TEST(PlannerOverride, KernelPathByLayer) {
  PlanOptions o;
  o.path = {{Phase::decode, {1, 3}, "decode_streaming_f32"}, {Phase::decode, {}, "decode_subgroup_f32"}};
  const TextShape s = decode(1, 32, 8, 128, 4096);
  o.layer = 3;
  EXPECT_EQ(plan_text(without_flash_decode(lavapipe()), s, o).variant->name, "decode_streaming_f32");
  o.layer = 1;
  EXPECT_EQ(plan_text(without_flash_decode(lavapipe()), s, o).variant->name, "decode_streaming_f32");
  o.layer = 2;  // not in {1, 3}: the catch-all entry
  EXPECT_EQ(plan_text(without_flash_decode(lavapipe()), s, o).variant->name, "decode_subgroup_f32");
  // Without the catch-all, an unlisted layer goes to the rules.
  o.path.pop_back();
  auto p = plan_text(without_flash_decode(lavapipe()), s, o);
  EXPECT_EQ(p.variant->name, "decode_online_split_f32");
  EXPECT_THAT(p.reason, StartsWith("split_kv"));
}

TEST(PlannerOverride, ForcedVariantWinsOverPath) {
  PlanOptions o;
  o.variant = "decode_subgroup_f32";
  o.path = {{Phase::decode, {}, "decode_streaming_f32"}};
  EXPECT_EQ(plan_text(lavapipe(), decode(1, 32, 8, 128, 4096), o).variant->name, "decode_subgroup_f32");
}

TEST(PlannerOverride, PathEntryIneligibleStrictThrows) {
  PlanOptions o;
  o.path = {{Phase::decode, {0}, "decode_subgroup_f32"}};
  o.strict = true;
  Error e = expect_error([&] { plan_text(no_subgroup(), decode(32, 32, 8, 64, 64), o); });
  EXPECT_THAT(e.what(), HasSubstr("decode_subgroup_f32"));
  o.layer = 7;  // entry does not match: the rules decide, no error
  EXPECT_EQ(plan_text(no_subgroup(), decode(32, 32, 8, 64, 64), o).variant->name, "decode_streaming_f32");
}

TEST(PlannerOverride, AdaptiveSwapOfStreamingPrefillOnShortPrompts) {
  PlanOptions o;
  o.variant = "prefill_streaming_f32";
  auto p64 = plan_text(lavapipe(), prefill(64, 8, 8, 64), o);
  EXPECT_EQ(p64.variant->name, "prefill_tiled_large_f32");
  EXPECT_THAT(p64.reason, StartsWith("override_adaptive_prefill"));
  EXPECT_THAT(p64.reason, HasSubstr("prefill_streaming_f32 replaced by prefill_tiled_large_f32 for 64 query rows"));
  auto p65 = plan_text(lavapipe(), prefill(65, 8, 8, 64), o);
  EXPECT_EQ(p65.variant->name, "prefill_streaming_f32");
  EXPECT_EQ(p65.reason, "override");
  // D128: tiled_large cannot take it, tiled_small does.
  auto d128 = plan_text(lavapipe(), prefill(16, 8, 8, 128), o);
  EXPECT_EQ(d128.variant->name, "prefill_tiled_small_f32");
  EXPECT_THAT(d128.reason, StartsWith("override_adaptive_prefill"));
  // D384: no tiled variant can, the override stands.
  auto d384 = plan_text(lavapipe(), prefill(16, 8, 8, 384), o);
  EXPECT_EQ(d384.variant->name, "prefill_streaming_f32");
  EXPECT_EQ(d384.reason, "override");
}

// ---- explain and JSON -------------------------------------------------------

TEST(PlannerExplain, NamesWinnerAndEveryCandidate) {
  auto p = plan_text(no_subgroup(), decode(32, 32, 8, 64, 128));
  const std::string text = explain(p);
  EXPECT_THAT(text, HasSubstr("chosen: decode_streaming_f32 (decode_streaming_fallback)"));
  EXPECT_THAT(text, HasSubstr("* decode_streaming_f32"));
  EXPECT_THAT(text, HasSubstr("- decode_subgroup_f32"));
  EXPECT_THAT(text, HasSubstr("+ decode_split_f32"));
  for (const auto& c : p.candidates) {
    EXPECT_THAT(text, HasSubstr(c.variant));
    EXPECT_THAT(text, HasSubstr(c.why));
  }
  EXPECT_THAT(text, HasSubstr("geometry:"));
}

TEST(PlannerExplain, JsonNamesWinnerCandidatesAndWarnings) {
  PlanOptions o;
  o.variant = "decode_subgroup_f32";
  auto p = plan_text(no_subgroup(), decode(32, 32, 8, 64, 128), o);
  auto j = nlohmann::json::parse(plan_to_json(p));
  EXPECT_EQ(j.at("variant"), "decode_streaming_f32");
  EXPECT_EQ(j.at("reason"), "override_fallback: decode_streaming_fallback");
  EXPECT_EQ(j.at("geometry").at("workgroup_size"), p.geometry.workgroup_size);
  EXPECT_EQ(j.at("geometry").at("splits"), 1);
  ASSERT_EQ(j.at("candidates").size(), p.candidates.size());
  for (size_t i = 0; i < p.candidates.size(); ++i) {
    EXPECT_EQ(j["candidates"][i].at("variant"), p.candidates[i].variant);
    EXPECT_EQ(j["candidates"][i].at("eligible"), p.candidates[i].eligible);
    EXPECT_EQ(j["candidates"][i].at("why"), p.candidates[i].why);
  }
  ASSERT_EQ(j.at("warnings").size(), 1u);
  EXPECT_THAT(j["warnings"][0].get<std::string>(), HasSubstr("decode_subgroup_f32"));
  EXPECT_THAT(explain(p), HasSubstr("warning: variant 'decode_subgroup_f32' rejected"));
}

}  // namespace
}  // namespace vkattn::planner

// Vision planner on synthetic devices and the shipped caps files (no GPU).
#include <gtest/gtest.h>

#include <set>

#include "planner/vision_planner.hpp"
#include "test_paths.hpp"
#include "vkattn/error.hpp"

namespace vkattn {
namespace {

DeviceCaps device(uint32_t shared, uint32_t subgroup, bool arithmetic, bool size_control = true) {
  DeviceCaps c;
  c.name = "synthetic";
  c.max_shared_memory_bytes = shared;
  c.max_workgroup_invocations = 1024;
  c.subgroup_size = c.min_subgroup_size = c.max_subgroup_size = subgroup;
  c.subgroup_arithmetic = arithmetic;
  c.subgroup_size_control = size_control;
  return c;
}

planner::VisionShape shape(uint32_t patches, uint32_t dim, DType t = DType::f32) {
  return {patches, 12, dim, t, VisionLayout::phd};
}

PlanOptions reduced() {
  PlanOptions o;
  o.allow_reduced_precision = true;
  return o;
}

TEST(VisionPlanner, Gemma4OnA32LaneGpuUsesSubgroupsWith64KeyTiles) {
  auto p = planner::plan_vision(device(49152, 32, true), shape(2304, 64), reduced());
  EXPECT_EQ(p.variant->name, "vision_flash_sg_f16s_q16_t64_f32");
  EXPECT_EQ(p.geometry.required_subgroup_size, 32u);  // rullama's subgroup kernels needed 64
  EXPECT_EQ(p.geometry.tile, 64u);
  EXPECT_LE(p.geometry.shared_bytes, 49152u);
}

TEST(VisionPlanner, F32InputsStayF32UnlessReducedPrecisionIsAllowed) {
  const DeviceCaps c = device(49152, 32, true);
  auto exact = planner::plan_vision(c, shape(2304, 64));
  EXPECT_FALSE(exact.variant->f16_shared) << exact.variant->name;
  EXPECT_EQ(exact.reason.find("allow_reduced_precision"), std::string::npos) << exact.reason;
  for (const auto& cand : exact.candidates)
    if (cand.variant.find("f16s") != std::string::npos) {
      EXPECT_FALSE(cand.eligible) << cand.variant;
      EXPECT_NE(cand.why.find("allow_reduced_precision"), std::string::npos) << cand.why;
    }
  auto fast = planner::plan_vision(c, shape(2304, 64), reduced());
  EXPECT_TRUE(fast.variant->f16_shared) << fast.variant->name;
  EXPECT_NE(fast.reason.find("allow_reduced_precision"), std::string::npos) << fast.reason;
  // An override of an f16-tile row on f32 inputs is rejected without the opt-in.
  PlanOptions forced;
  forced.variant = "vision_flash_f16s_q8_f32";
  forced.strict = true;
  EXPECT_THROW(planner::plan_vision(c, shape(2304, 64), forced), Error);
  forced.allow_reduced_precision = true;
  EXPECT_EQ(planner::plan_vision(c, shape(2304, 64), forced).variant->name, "vision_flash_f16s_q8_f32");
  // f16 inputs lose nothing in f16 tiles: no opt-in needed.
  EXPECT_TRUE(planner::plan_vision(c, shape(2304, 64, DType::f16)).variant->f16_shared);
}

TEST(VisionPlanner, NoSubgroupsFallsBackToWideF32Tiles) {
  auto p = planner::plan_vision(device(49152, 32, false), shape(2304, 64));
  EXPECT_EQ(p.variant->name, "vision_flash_q8_t64_f32");
  auto few = planner::plan_vision(device(49152, 32, false), shape(300, 64));
  EXPECT_EQ(few.variant->name, "vision_flash_q16_f32");
}

TEST(VisionPlanner, VaryingSubgroupSizeWithoutControlRejectsSubgroupRows) {
  DeviceCaps c = device(49152, 32, true, false);
  c.min_subgroup_size = 8;
  c.max_subgroup_size = 64;
  auto p = planner::plan_vision(c, shape(2304, 64));
  EXPECT_FALSE(p.variant->subgroup);
  for (const auto& cand : p.candidates)
    if (cand.variant.find("_sg_") != std::string::npos) EXPECT_FALSE(cand.eligible) << cand.variant;
}

TEST(VisionPlanner, LargeHeadDimOnSmallSharedMemoryUsesF16Tiles) {
  // D = 128 on 32 KiB: 16 queries leave room for 32-key tiles only in f16.
  auto p = planner::plan_vision(device(32768, 8, false), shape(500, 128), reduced());
  EXPECT_EQ(p.variant->name, "vision_flash_f16s_q16_f32");
  EXPECT_EQ(p.geometry.tile, 32u);
  EXPECT_LE(p.geometry.shared_bytes, 32768u);
  // D = 256: f32 tiles of 8 queries would shrink to 8 keys, f16 ones only to 16.
  auto wide = planner::plan_vision(device(32768, 8, false), shape(500, 256), reduced());
  EXPECT_EQ(wide.variant->name, "vision_flash_f16s_q8_f32");
  EXPECT_EQ(wide.geometry.tile, 16u);
}

TEST(VisionPlanner, TilesShrinkToTheDevice) {
  for (uint32_t shared : {16384u, 32768u, 49152u}) {
    for (uint32_t d : {64u, 128u, 192u, 256u}) {
      for (const auto& v : planner::vision_variants()) {
        auto g = planner::vision_geometry(v, device(shared, 32, true), shape(100, d, v.dtype));
        if (g.geometry) EXPECT_LE(g.geometry->shared_bytes, shared) << v.name << " D" << d;
      }
    }
  }
}

TEST(VisionPlanner, FewPatchesUseFewQueriesPerWorkgroup) {
  EXPECT_EQ(planner::plan_vision(device(49152, 32, false), shape(2, 64)).variant->name, "vision_flash_q1_f32");
  EXPECT_EQ(planner::plan_vision(device(49152, 32, false), shape(5, 64)).variant->name, "vision_flash_q4_f32");
  EXPECT_EQ(planner::plan_vision(device(49152, 32, false), shape(20, 64)).variant->name, "vision_flash_q8_f32");
}

TEST(VisionPlanner, TinySharedMemoryFallsBackToReference) {
  auto p = planner::plan_vision(device(1024, 1, false), shape(100, 256));
  EXPECT_EQ(p.variant->name, "vision_reference_f32");
}

TEST(VisionPlanner, StrictOverrideBeyondTheVariantsHeadDimThrowsNamingIt) {
  PlanOptions o;
  o.variant = "vision_flash_q8_t64_f32";
  o.strict = true;
  try {
    planner::plan_vision(device(49152, 32, true), shape(100, 256), o);
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::unsupported);
    EXPECT_NE(std::string(e.what()).find("head_dim <= 128, got 256"), std::string::npos) << e.what();
  }
  o.strict = false;
  auto p = planner::plan_vision(device(49152, 32, true), shape(100, 256), o);
  EXPECT_EQ(p.warnings.size(), 1u);
  EXPECT_NE(p.reason.find("override_fallback"), std::string::npos);
}

TEST(VisionPlanner, UnknownOverrideIsAnInvalidArgument) {
  PlanOptions o;
  o.variant = "vision_flash_q99_f32";
  o.strict = true;
  try {
    planner::plan_vision(device(49152, 32, true), shape(100, 64), o);
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("'vision_flash_q99_f32'"), std::string::npos) << e.what();
  }
}

TEST(VisionPlanner, HeadMajorRowIsOverrideOnlyAndNotForHpdInput) {
  auto p = planner::plan_vision(device(49152, 32, true), shape(2304, 64));
  for (const auto& c : p.candidates)
    if (c.variant == "vision_flash_hpd_q8_f32") EXPECT_NE(c.why.find("override only"), std::string::npos);
  auto hpd = shape(2304, 64);
  hpd.layout = VisionLayout::hpd;
  auto g = planner::vision_geometry(*planner::find_vision_variant("vision_flash_hpd_q8_f32"),
                                    device(49152, 32, true), hpd);
  EXPECT_FALSE(g.geometry);
}

TEST(VisionPlanner, ExplainNamesEveryRowOfTheDtypeAndTheWinner) {
  auto p = planner::plan_vision(load_caps_file(testing::caps_path("nvidia-h200.json")), shape(2304, 64));
  const std::string text = planner::explain(p);
  EXPECT_NE(text.find("chosen: " + p.variant->name), std::string::npos);
  size_t f32_rows = 0;  // every row but the workgroup-matrix ones (f16 only) has an f32 twin
  for (const auto& v : planner::vision_variants()) f32_rows += v.dtype == DType::f32;
  EXPECT_EQ(p.candidates.size(), f32_rows);
  EXPECT_NE(planner::plan_to_json(p).find("\"candidates\""), std::string::npos);
}

TEST(VisionPlanner, TensorCoresOnTheH200ForF16AndForF32WithReducedPrecision) {
  const DeviceCaps h200 = load_caps_file(testing::caps_path("nvidia-h200.json"));
  auto gemma = planner::plan_vision(h200, shape(2304, 64, DType::f16));
  EXPECT_EQ(gemma.variant->name, "vision_flash_coopmat_f16");
  EXPECT_EQ(gemma.variant->module, "flash_coopmat");
  EXPECT_NE(gemma.reason.find("tensor_cores"), std::string::npos) << gemma.reason;
  EXPECT_EQ(gemma.geometry.required_subgroup_size, 32u);
  EXPECT_LE(gemma.geometry.shared_bytes, 49152u);
  EXPECT_EQ(gemma.geometry.workgroup_size, gemma.geometry.queries / 16 * 32);  // a warp per 16 patches
  // SigLIP's 72 is padded to 80 in the fragments, not refused; HPD is only strides.
  auto siglip = shape(4096, 72, DType::f16);
  siglip.layout = VisionLayout::hpd;
  EXPECT_EQ(planner::plan_vision(h200, siglip).variant->name, "vision_flash_coopmat_f16");
  EXPECT_EQ(planner::plan_vision(h200, shape(3, 256, DType::f16)).variant->name, "vision_flash_coopmat_f16");
  // f32 inputs would be rounded to f16: only with the permission.
  EXPECT_NE(planner::plan_vision(h200, shape(2304, 64)).variant->kind, planner::VisionKind::fragments);
  auto f32 = planner::plan_vision(h200, shape(2304, 64), reduced());
  EXPECT_EQ(f32.variant->name, "vision_flash_coopmat_f32");
  EXPECT_NE(f32.reason.find("allow_reduced_precision"), std::string::npos) << f32.reason;
}

TEST(VisionPlanner, EmulatedFragmentsAreOverrideOnlyAndCoopmatNeedsTheExtension) {
  const DeviceCaps lavapipe = load_caps_file(testing::caps_path("lavapipe.json"));
  auto p = planner::plan_vision(lavapipe, shape(300, 72, DType::f16));
  EXPECT_NE(p.variant->kind, planner::VisionKind::fragments) << p.variant->name;
  for (const auto& c : p.candidates) {
    if (c.variant == "vision_flash_emulated_f16") EXPECT_NE(c.why.find("override only"), std::string::npos) << c.why;
    if (c.variant == "vision_flash_coopmat_f16") {
      EXPECT_FALSE(c.eligible);
      EXPECT_NE(c.why.find("VK_NV_cooperative_matrix"), std::string::npos) << c.why;
    }
  }
  PlanOptions o;
  o.variant = "vision_flash_emulated_f16";
  o.strict = true;
  auto e = planner::plan_vision(lavapipe, shape(300, 72, DType::f16), o);
  EXPECT_EQ(e.variant->module, "flash_coopmat_emulated");
  EXPECT_EQ(e.geometry.required_subgroup_size, 0u);
  EXPECT_LE(e.geometry.shared_bytes, lavapipe.max_shared_memory_bytes);
  o.variant = "vision_flash_coopmat_f16";
  EXPECT_THROW(planner::plan_vision(lavapipe, shape(300, 72, DType::f16), o), Error);
}

TEST(VisionPlanner, EveryVariantHasADistinctName) {
  std::set<std::string> names;
  for (const auto& v : planner::vision_variants()) EXPECT_TRUE(names.insert(v.name).second) << v.name;
}

}  // namespace
}  // namespace vkattn

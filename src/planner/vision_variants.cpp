#include "planner/vision_variants.hpp"

namespace vkattn::planner {

namespace {

// rullama's vision kernels, generalized: head dims to 256 (rullama stops at 64),
// any subgroup size (rullama's subgroup kernels assume 64 lanes), tiles sized
// from the device's shared memory instead of a fixed 16 KiB budget.
struct VisionFamily {
  const char* name;
  VisionKind kind;
  uint32_t queries, max_tile, min_tile;
  bool subgroup, f16_shared, head_major;
  uint32_t max_head_dim, workgroup_size;
  bool cooperative_matrix = false;
};

constexpr VisionFamily kVisionFamilies[] = {
    // name                       kind                 q   tile min  sg     f16s   hpd    maxD wg
    {"vision_reference",          VisionKind::reference, 1,  1,  1,  false, false, false, 256, 64},
    {"vision_flash_q1",           VisionKind::flash,     1,  32, 8,  false, false, false, 256, 64},
    {"vision_flash_q4",           VisionKind::flash,     4,  32, 8,  false, false, false, 256, 64},
    {"vision_flash_q8",           VisionKind::flash,     8,  32, 8,  false, false, false, 256, 128},
    {"vision_flash_q16",          VisionKind::flash,     16, 32, 8,  false, false, false, 256, 128},
    // 64-key tiles halve the barriers per key; they are only worth it unshrunk,
    // which shared memory allows up to head dim 128 (f16 tiles on a 48 KiB device).
    {"vision_flash_q8_t64",       VisionKind::flash,     8,  64, 64, false, false, false, 128, 128},
    {"vision_flash_sg_q8",        VisionKind::flash,     8,  32, 8,  true,  false, false, 256, 128},
    {"vision_flash_sg_q16",       VisionKind::flash,     16, 32, 8,  true,  false, false, 256, 128},
    {"vision_flash_hpd_q8",       VisionKind::flash,     8,  32, 8,  false, false, true,  256, 128},
    {"vision_flash_f16s_q8",      VisionKind::flash,     8,  32, 8,  false, true,  false, 256, 128},
    {"vision_flash_f16s_q16",     VisionKind::flash,     16, 32, 8,  false, true,  false, 256, 128},
    {"vision_flash_sg_f16s_q16_t64", VisionKind::flash,  16, 64, 64, true,  true,  false, 128, 128},
    // The workgroup-matrix engine of text prefill (workgroup_geometry sizes
    // rows, keys and workgroup from q and tile; f16 only), and its plain-GLSL
    // build, which CI runs on lavapipe.
    {"vision_flash_coopmat2",     VisionKind::workgroup_matrices, 64, 64, 16, false, true, false, 256, 128, true},
    {"vision_flash_wg_emulated",  VisionKind::workgroup_matrices, 16, 16, 16, false, true, false, 256, 32, false},
    // The tensor-core engine of text prefill (fragment_geometry sizes rows,
    // keys and warps per device; q and tile are the most it tries), and its
    // plain-GLSL build, which CI runs on lavapipe.
    {"vision_flash_coopmat",      VisionKind::fragments, 128, 64, 16, false, true,  false, 256, 256, true},
    {"vision_flash_emulated",     VisionKind::fragments, 128, 64, 16, false, true,  false, 256, 256, false},
};

std::string vision_module_of(const VisionFamily& f) {
  if (f.kind == VisionKind::fragments) return f.cooperative_matrix ? "flash_coopmat" : "flash_coopmat_emulated";
  if (f.kind == VisionKind::workgroup_matrices) return f.cooperative_matrix ? "flash_workgroup" : "flash_workgroup_emulated";
  return f.subgroup ? "vision_attention_subgroup" : "vision_attention";
}

constexpr DType kVisionDtypes[] = {DType::f32, DType::f16};

}  // namespace

const std::vector<VisionVariant>& vision_variants() {
  static const std::vector<VisionVariant> table = [] {
    std::vector<VisionVariant> t;
    for (const auto& f : kVisionFamilies)
      for (DType d : kVisionDtypes)
        if (f.kind != VisionKind::workgroup_matrices || d == DType::f16)  // it loads f16 K/V as stored
          t.push_back({std::string(f.name) + "_" + std::string(to_string(d)), f.name, f.kind, d, f.queries,
                     f.max_tile, f.min_tile, f.subgroup, f.f16_shared, f.cooperative_matrix, f.head_major,
                     f.max_head_dim, f.workgroup_size, vision_module_of(f)});
    return t;
  }();
  return table;
}

const VisionVariant* find_vision_variant(const std::string& name) {
  for (const auto& v : vision_variants())
    if (v.name == name) return &v;
  return nullptr;
}

}  // namespace vkattn::planner

#include "planner/bdpa_variants.hpp"

#include "planner/text_variants.hpp"

namespace vkattn::planner {

namespace {

struct BdpaFamily {
  const char* name;
  Phase phase;
  bool split;
  uint32_t target_rows;
  uint32_t max_tile_keys;
  uint32_t min_tile_keys;
  uint32_t workgroup_size;
};

// One shader (bdpa_attention.comp) for all: the rows differ in geometry. The
// head-dim limit keeps a 16-key tile of rebuilt f32 K and V rows in 32 KiB.
constexpr uint32_t kMaxHeadDim = 256;
constexpr BdpaFamily kBdpaFamilies[] = {
    // name                phase           split  rows tk  mintk wg
    {"bdpa_decode_split",  Phase::decode,  true,  16,  32, 4,    128},
    {"bdpa_decode",        Phase::decode,  false, 16,  32, 4,    128},
    {"bdpa_prefill_tiled", Phase::prefill, false, 16,  32, 4,    128},
};

struct BdpaDtypeCombo {
  DType q, basis;
};
constexpr BdpaDtypeCombo kBdpaCombos[] = {
    {DType::f32, DType::f32}, {DType::f32, DType::f16},   {DType::f16, DType::f16},
    {DType::f32, DType::bf16}, {DType::bf16, DType::bf16},
};

}  // namespace

const std::vector<BdpaVariant>& bdpa_variants() {
  static const std::vector<BdpaVariant> table = [] {
    std::vector<BdpaVariant> t;
    for (const auto& f : kBdpaFamilies)
      for (const auto& c : kBdpaCombos)
        t.push_back({std::string(f.name) + "_" + dtype_suffix(c.q, c.basis), f.name, f.phase, f.split, c.q, c.basis,
                     kMaxHeadDim, f.target_rows, f.max_tile_keys, f.min_tile_keys, f.workgroup_size,
                     "bdpa_attention"});
    return t;
  }();
  return table;
}

const BdpaVariant* find_bdpa_variant(const std::string& name) {
  for (const auto& v : bdpa_variants())
    if (v.name == name) return &v;
  return nullptr;
}

}  // namespace vkattn::planner

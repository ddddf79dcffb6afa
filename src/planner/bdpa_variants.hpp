// The BDPA variant table: every BDPA kernel the planner can pick, as data.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vkattn/plan.hpp"
#include "vkattn/types.hpp"

namespace vkattn::planner {

struct BdpaVariant {
  std::string name;         // stable id, e.g. "bdpa_decode_split_f16kv"
  std::string family;       // name without the dtype suffix
  Phase phase;
  bool split;               // KV split across workgroups, then text_split_reduce
  DType q, basis;           // accepted Q and basis dtypes (residuals are always int8)
  uint32_t max_head_dim;
  uint32_t target_rows;     // query rows (positions x GQA heads) per workgroup
  uint32_t max_tile_keys;   // keys rebuilt per step, halved to fit shared memory
  uint32_t min_tile_keys;
  uint32_t workgroup_size;
  std::string module;
};

const std::vector<BdpaVariant>& bdpa_variants();
const BdpaVariant* find_bdpa_variant(const std::string& name);

}  // namespace vkattn::planner

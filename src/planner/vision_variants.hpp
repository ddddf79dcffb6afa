// The vision-attention variant table: every kernel the planner can pick, as data.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vkattn/types.hpp"

namespace vkattn::planner {

enum class VisionKind : uint8_t {
  reference,  // one invocation per (patch, head), K/V straight from memory
  flash,      // K/V tiles in shared memory, online softmax
  fragments,  // flash_coopmat.comp, the text prefill's matrix-fragment engine, bidirectional
  workgroup_matrices,  // flash_workgroup.comp, the text prefill's workgroup-matrix engine, bidirectional (f16)
};

// The kinds that run a text prefill engine (its bindings, push constants and
// dispatch) on a vision call.
inline bool runs_text_engine(VisionKind k) { return k == VisionKind::fragments || k == VisionKind::workgroup_matrices; }

struct VisionVariant {
  std::string name;          // stable id, e.g. "vision_flash_q8_f16"
  std::string family;        // name without the dtype suffix
  VisionKind kind;
  DType dtype;               // Q, K, V dtype (f32 | f16)
  uint32_t queries;          // patches per workgroup (flash); the most tried (fragments)
  uint32_t max_tile;         // keys per shared-memory tile, halved to fit the device
  uint32_t min_tile;         // below this the variant is not worth running
  bool subgroup;             // tile reductions with subgroup arithmetic (USE_SUBGROUP module)
  bool f16_shared;           // K/V tiles stored as packed f16 pairs, f32 accumulation (fragments: Q too)
  bool cooperative_matrix;   // fragments on VK_NV_cooperative_matrix (else their plain-GLSL build)
  bool head_major;           // runs in HPD; PHD tensors are transposed in and out
  uint32_t max_head_dim;
  uint32_t workgroup_size;
  std::string module;        // embedded SPIR-V module
};

// Every row, generated once from family x dtype.
const std::vector<VisionVariant>& vision_variants();
const VisionVariant* find_vision_variant(const std::string& name);

}  // namespace vkattn::planner

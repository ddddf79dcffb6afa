// The text-attention variant table: every kernel the planner can pick, as data.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ops/dtype_code.hpp"
#include "vkattn/caps.hpp"
#include "vkattn/plan.hpp"
#include "vkattn/types.hpp"

namespace vkattn::planner {

// Which kernel design a variant runs.
enum class Engine : uint8_t {
  shared_tiles,      // text_attention.comp: K/V tiles staged in shared memory
  registers_online,  // text_decode_online.comp: K/V streamed into registers, subgroup online softmax
  flash_fragments,   // flash_coopmat.comp: 16x16 matrix fragments (tensor cores, or their plain-GLSL emulation)
  registers_flash,   // text_decode_flash.comp: 16-byte K/V words in registers, lane groups per key
  streamed_fragments,  // text_decode_stream.comp: 16x8 fragments loaded from K/V into registers (or emulated)
  workgroup_matrices,  // flash_workgroup.comp: workgroup-scope matrices of GL_NV_cooperative_matrix2 (or emulated)
};

// The matrix-fragment engines: f16 operands, every K/V dtype staged as f16.
inline bool stages_f16_fragments(Engine e) {
  return e == Engine::flash_fragments || e == Engine::streamed_fragments || e == Engine::workgroup_matrices;
}

// How a variant spreads a call over workgroups.
enum class Kind : uint8_t {
  streaming,    // one query position per workgroup (all GQA heads of a KV head), no split
  tiled,        // many query positions per workgroup; K/V tiles reused across them
  split,        // flash-decoding: the KV range split across workgroups, then reduced
};

struct TextVariant {
  std::string name;          // stable id, e.g. "decode_split_f16kv"
  std::string family;        // name without the dtype suffix
  Phase phase;
  Kind kind;
  Engine engine;
  DType q, kv;               // accepted input dtypes (output follows Q unless asked)
  bool needs_subgroup_arithmetic;
  bool needs_subgroup_shuffle;
  // Tensor cores: VK_NV_cooperative_matrix with f16 16x16x16 -> f32, or for
  // Engine::workgroup_matrices VK_NV_cooperative_matrix2 (DeviceCaps::cooperative_matrix2_nv).
  bool needs_cooperative_matrix;
  bool reduced_precision;    // rounds f32 inputs to f16: chosen only with PlanOptions::allow_reduced_precision
  uint32_t min_head_dim;
  uint32_t max_head_dim;
  uint32_t target_rows;      // query rows (positions x GQA heads) per workgroup
  uint32_t max_tile_keys;    // keys staged per step, shrunk to fit shared memory
  uint32_t min_tile_keys;    // below this the variant is not worth running
  uint32_t workgroup_size;
  // Split calls: the kernel's last split of a row combines the partials
  // (text_split_combine.glsl) instead of a text_split_reduce dispatch.
  bool last_split_combines;
  std::string module;        // embedded SPIR-V module
  // The same kernel reading K/V through buffer device addresses (pools past
  // one storage-buffer binding; src/shaders/text.shaders.cmake).
  std::string module_by_address() const { return module + "_kv_address"; }
};

// The dtype whose precision K/V stored as `kv` reach the products of variant
// `v` (which ran a call with Q in `q`) at, for the oracle's tolerance.
// Dequantized codes are exact in f32, so they count as Q's dtype, except on
// the fragment engines, which stage every K/V dtype as f16 (bf16 exactly, at
// a power of two; dequantized codes rounded).
inline DType kv_precision(const TextVariant* v, DType q, DType kv) {
  if (!is_quantized(kv)) return kv;
  return v && stages_f16_fragments(v->engine) ? DType::f16 : q;
}

// Every row, generated once from family x dtype combinations.
const std::vector<TextVariant>& text_variants();
const TextVariant* find_text_variant(const std::string& name);

// Dtype suffix of a (q, kv) pair: f32, f16kv, f16, bf16kv, bf16, i8kv, f16_i8kv, i4kv, f16_i4kv.
std::string dtype_suffix(DType q, DType kv);

}  // namespace vkattn::planner

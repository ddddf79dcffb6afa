#include "planner/text_variants.hpp"

#include <algorithm>

namespace vkattn::planner {

namespace {

// The families. Thresholds follow doppler's intent (tiled large for head dim
// <= 64, tiled small up to 256), with shared memory checked per device in
// text_geometry rather than as fixed minimums.
struct TextFamily {
  const char* name;
  Phase phase;
  Kind kind;
  Engine engine;
  bool subgroup;  // subgroup arithmetic
  bool shuffle;   // subgroup shuffles
  bool coopmat;   // VK_NV_cooperative_matrix
  uint32_t min_head_dim;
  uint32_t max_head_dim;
  uint32_t target_rows;
  uint32_t max_tile_keys;
  uint32_t min_tile_keys;
  uint32_t workgroup_size;
};

constexpr TextFamily kTextFamilies[] = {
    // For registers_online, rows caps the query heads per workgroup and tk is
    // the keys each subgroup loads per step; for registers_flash, tk is the
    // keys each lane group loads per step. For flash_fragments, rows and tk
    // are the most the planner tries (fragment_geometry sizes them per device).
    // name                    phase           kind             engine                    sg     shfl   coop   minD maxD rows tk  mintk wg
    {"prefill_flash_coopmat2", Phase::prefill, Kind::tiled,     Engine::workgroup_matrices, false, false, true, 16, 256, 64, 64, 16,   128},
    {"prefill_flash_wg_emulated", Phase::prefill, Kind::tiled,  Engine::workgroup_matrices, false, false, false, 16, 256, 16, 16, 16,  32},
    {"prefill_flash_coopmat",  Phase::prefill, Kind::tiled,     Engine::flash_fragments,  false, false, true,  16,  256, 128, 64, 16,   128},
    {"prefill_flash_emulated", Phase::prefill, Kind::tiled,     Engine::flash_fragments,  false, false, false, 16,  256, 128, 64, 16,   128},
    {"prefill_tiled_large",    Phase::prefill, Kind::tiled,     Engine::shared_tiles,     false, false, false, 8,   64,  32,  32, 16,   128},
    {"prefill_tiled_small",    Phase::prefill, Kind::tiled,     Engine::shared_tiles,     false, false, false, 8,   256, 16,  32, 4,    128},
    {"prefill_streaming",      Phase::prefill, Kind::streaming, Engine::shared_tiles,     false, false, false, 8,   512, 1,   32, 1,    64},
    {"decode_flash_coopmat",   Phase::decode,  Kind::split,     Engine::flash_fragments,  false, false, true,  16,  128, 16,  16, 16,   32},
    {"decode_flash_emulated",  Phase::decode,  Kind::split,     Engine::flash_fragments,  false, false, false, 16,  128, 16,  16, 16,   32},
    {"decode_stream_coopmat",  Phase::decode,  Kind::split,     Engine::streamed_fragments, false, false, true,  16, 256, 8,  16, 16,   256},
    {"decode_stream_emulated", Phase::decode,  Kind::split,     Engine::streamed_fragments, false, false, false, 16, 256, 8,  16, 16,   256},
    {"decode_flash",           Phase::decode,  Kind::split,     Engine::registers_flash,  false, true,  false, 8,   512, 8,   4,  1,    256},
    {"decode_online_split",    Phase::decode,  Kind::split,     Engine::registers_online, true,  false, false, 8,   512, 8,   4,  4,    128},
    {"decode_split",           Phase::decode,  Kind::split,     Engine::shared_tiles,     false, false, false, 8,   512, 16,  32, 4,    128},
    {"decode_online",          Phase::decode,  Kind::streaming, Engine::registers_online, true,  false, false, 8,   512, 8,   4,  4,    128},
    {"decode_subgroup",        Phase::decode,  Kind::streaming, Engine::shared_tiles,     true,  false, false, 8,   512, 16,  32, 4,    128},
    // Lanes across the head dimension without subgroup operations; doppler's
    // threshold: worth it from head dim 128.
    {"decode_chunked",         Phase::decode,  Kind::streaming, Engine::registers_online, false, false, false, 128, 512, 8,   4,  4,    128},
    {"decode_streaming",       Phase::decode,  Kind::streaming, Engine::shared_tiles,     false, false, false, 8,   512, 16,  32, 1,    64},
};

struct TextDtypeCombo {
  DType q, kv;
};
constexpr TextDtypeCombo kTextCombos[] = {
    {DType::f32, DType::f32}, {DType::f32, DType::f16},   {DType::f16, DType::f16},
    {DType::f32, DType::bf16}, {DType::bf16, DType::bf16},
    // Quantized KV (dequantized in the kernel), with f32 or f16 Q.
    {DType::f32, DType::i8},  {DType::f16, DType::i8},     {DType::f32, DType::i4}, {DType::f16, DType::i4},
};

// Matrix fragments are f16: the fragment engines take f16 K/V, and Q in f16
// or f32 (rounds_q). They also take bf16 K/V with bf16 or f32 Q, staged as
// f16 times a power of two, which is exact (f16_stage_shift in
// text_common.glsl). The flash engine's prefill rows take int8/int4 K/V too,
// with f16 or f32 Q: each tile's codes are decoded as they are staged, and the
// matrix work per key is f16's (on the H100, S2048 prefill over an int8 or
// int4 cache in 0.46 ms against 6.0 ms on prefill_tiled_small, 13x). Decode
// over quantized caches stays on decode_flash, which decodes the codes in
// registers without staging them: on the H100 the flash engine took 4-7x its
// time there, and the stream engine, with codes staged as f16, 1.3-2.1x.
bool on_fragments(const TextFamily& f) { return stages_f16_fragments(f.engine); }
// The flash engine rounds f32 Q to f16 once (reduced precision); the stream
// engine keeps it as two f16 parts (text_decode_stream.comp, Q_PARTS).
bool rounds_q(const TextFamily& f, const TextDtypeCombo& c) {
  return (f.engine == Engine::flash_fragments || f.engine == Engine::workgroup_matrices) && c.q == DType::f32;
}
bool takes(const TextFamily& f, const TextDtypeCombo& c) {
  if (!on_fragments(f)) return true;
  // Workgroup matrices load f16 K/V as they are stored (tensor addressing), Q as f16 or f32.
  if (f.engine == Engine::workgroup_matrices) return c.kv == DType::f16 && (c.q == DType::f16 || c.q == DType::f32);
  if (c.kv == DType::f16) return c.q == DType::f16 || c.q == DType::f32;
  if (is_quantized(c.kv)) return f.engine == Engine::flash_fragments && f.phase == Phase::prefill;
  return c.kv == DType::bf16 && (c.q == DType::bf16 || c.q == DType::f32);
}

// The tensor-core prefill rows over int8/int4 K/V stop at head dim 128. On
// an NVIDIA H100 (driver 580.159.04, 2026-12-07) wider ones gave wrong output
// where f16 and bf16 rows of the same widths, and the emulated build of the
// same source, matched the oracle: D192 and D224 int8 (7 rows over 40 keys)
// relative error 1.0, and the kvcache grid's D256 ring cases non-finite,
// while D64-D160 and other D256 shapes passed. Those wrong rows are compiled
// at 255 registers with the driver reporting more shared memory than the
// kernel declares (docs/performance.md). Until the cause is found, wider
// quantized rows take prefill_tiled_small.
constexpr uint32_t kQuantizedTensorCoreMaxHeadDim = 128;
uint32_t max_head_dim(const TextFamily& f, const TextDtypeCombo& c) {
  return is_quantized(c.kv) && f.coopmat ? std::min(f.max_head_dim, kQuantizedTensorCoreMaxHeadDim) : f.max_head_dim;
}

// The kernels that include text_split_combine.glsl.
bool last_split_combines(const TextFamily& f) {
  return f.engine == Engine::streamed_fragments || f.engine == Engine::registers_flash;
}

std::string module_of(const TextFamily& f) {
  if (f.engine == Engine::flash_fragments) return f.coopmat ? "flash_coopmat" : "flash_coopmat_emulated";
  if (f.engine == Engine::streamed_fragments) return f.coopmat ? "text_decode_stream" : "text_decode_stream_emulated";
  if (f.engine == Engine::registers_flash) return "text_decode_flash";
  if (f.engine == Engine::workgroup_matrices) return f.coopmat ? "flash_workgroup" : "flash_workgroup_emulated";
  if (f.engine == Engine::registers_online) return f.subgroup ? "text_decode_online_subgroup" : "text_decode_online";
  return f.subgroup ? "text_attention_subgroup" : "text_attention";
}

}  // namespace

std::string dtype_suffix(DType q, DType kv) {
  if (q == kv) return std::string(to_string(q));
  // Mixed pairs take f32 Q, except quantized K/V, which also take f16 Q.
  const std::string q_part = q == DType::f32 ? "" : std::string(to_string(q)) + "_";
  return q_part + std::string(to_string(kv)) + "kv";
}

const std::vector<TextVariant>& text_variants() {
  static const std::vector<TextVariant> table = [] {
    std::vector<TextVariant> t;
    for (const auto& f : kTextFamilies)
      for (const auto& c : kTextCombos)
        if (takes(f, c))
          t.push_back({std::string(f.name) + "_" + dtype_suffix(c.q, c.kv), f.name, f.phase, f.kind, f.engine, c.q,
                       c.kv, f.subgroup, f.shuffle, f.coopmat, rounds_q(f, c),
                       f.min_head_dim, max_head_dim(f, c), f.target_rows, f.max_tile_keys, f.min_tile_keys,
                       f.workgroup_size, last_split_combines(f), module_of(f)});
    return t;
  }();
  return table;
}

const TextVariant* find_text_variant(const std::string& name) {
  for (const auto& v : text_variants())
    if (v.name == name) return &v;
  return nullptr;
}

}  // namespace vkattn::planner

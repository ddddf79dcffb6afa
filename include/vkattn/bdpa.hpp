// Basis-decomposed paged attention (BDPA): attention over a KV cache whose
// rows are a basis row shared by every occurrence of a token id plus an int8
// residual, and the GPU builder that makes such a cache from a contiguous one.
//
// The cache (B sequences, Hkv KV heads, head dim D):
//   basis_k, basis_v        [num_basis, Hkv, D]   f32 | f16 | bf16; keys before RoPE
//   residual_k, residual_v  [num_residual, Hkv, D] i8, 4 per u32 word (little-endian, two's complement)
//   residual_k_scale, _v    [num_residual, Hkv]   f32: one scale per (row, KV head)
//   index                   [B, kv_capacity, 3]     u32: (basis row, residual row, original position)
// Key j of sequence b (j < kv_len[b]) is
//   basis[index[b][j][0]] + scale[index[b][j][1]] * residual[index[b][j][1]],
// rotated by RoPE at position index[b][j][2] (keys only, exactly once); the
// value is rebuilt the same way without RoPE. Masks (causal, window) compare
// that position with the query's (start_pos[b] + i).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "vkattn/caps.hpp"
#include "vkattn/export.hpp"
#include "vkattn/tensor.hpp"
#include "vkattn/text.hpp"

namespace vkattn {

enum class RopePairing : uint8_t {
  rotate_half,  // element i pairs with i + rotary_dim / 2 (Llama, NeoX)
  interleaved,  // element 2i pairs with 2i + 1 (GPT-J)
};
VKATTN_API std::string_view to_string(RopePairing p);
VKATTN_API RopePairing rope_pairing_from_string(std::string_view name);  // throws Error naming "rope"

struct VKATTN_API BdpaParams {
  uint32_t batch = 1;
  uint32_t seq_len = 1;       // S query rows per sequence (1 = decode)
  uint32_t num_heads = 1;
  uint32_t num_kv_heads = 1;  // H % Hkv == 0
  uint32_t head_dim = 64;     // a multiple of 8, at most 256
  bool causal = false;
  uint32_t window = 0;        // > 0: hide keys at or before query_pos - window
  float softcap = 0.0f;
  std::optional<float> scale;  // default 1/sqrt(head_dim)
  uint32_t kv_capacity = 0;    // index entries per sequence
  uint32_t num_basis = 0;      // rows of the basis tensors
  uint32_t num_residual = 0;   // rows of the residual pools
  uint32_t rotary_dim = 0;     // leading elements rotated: even, <= head_dim; 0: no RoPE
  RopePairing pairing = RopePairing::rotate_half;
  uint32_t rope_positions = 0;  // rows of rope_cos / rope_sin: positions must be below it
  std::vector<uint32_t> kv_len{0};     // keys (index entries) per sequence
  std::vector<uint32_t> start_pos{0};  // absolute position of query row 0

  float effective_scale() const;
  uint32_t kv_len_of(uint32_t b) const { return kv_len.size() == 1 ? kv_len[0] : kv_len.at(b); }
  uint32_t start_pos_of(uint32_t b) const { return start_pos.size() == 1 ? start_pos[0] : start_pos.at(b); }
  // The text-attention call this one stands for: a contiguous cache of
  // kv_capacity slots (key j at position j) with the same heads, masks, scale,
  // softcap and per-sequence values.
  TextAttentionParams contiguous_equivalent() const;
};

struct BdpaTensors {
  Tensor q;                                   // [B, S, H, D] f32 | f16 | bf16
  Tensor basis_k, basis_v;                    // [num_basis, Hkv, D]
  Tensor residual_k, residual_v;              // i8 [num_residual, Hkv, D]
  Tensor residual_k_scale, residual_v_scale;  // f32 [num_residual, Hkv]
  Tensor index;                               // u32 [B, kv_capacity, 3]
  Tensor rope_cos, rope_sin;                  // f32 [rope_positions, rotary_dim / 2]; unused when rotary_dim is 0
  Tensor out;                                 // [B, S, H, D] f32 | f16 | bf16
  Tensor kv_len;                              // optional u32 [B]
  Tensor start_pos;                           // optional u32 [B]
};

// What planning needs to know about a call's tensors.
struct BdpaTensorTypes {
  DType q = DType::f32;
  DType basis = DType::f16;
  DType out = DType::f32;
  bool kv_len_on_gpu = false;  // kv_len read from a GPU buffer: splits sized for kv_capacity
};
VKATTN_API BdpaTensorTypes bdpa_tensor_types(const BdpaTensors& tensors);

// The plan of one call on a device (no GPU work): variant, geometry, the
// attention dispatch (and text_split_reduce's for a split plan) and scratch.
// PlanOptions' variant, path and splits are honoured; tile_keys and rows are an Error.
VKATTN_API Plan plan_bdpa(const DeviceCaps& caps, const BdpaParams& params, const BdpaTensorTypes& types,
                          const PlanOptions& options);
// Records a plan (no submit); a plan that is not this call's on this device is an Error.
VKATTN_API TextCallInfo record(Recorder& rec, const Plan& plan, const BdpaParams& params, const BdpaTensors& tensors);

// Validates, plans ("bdpa_*" variants, PlanOptions honoured) and records one
// call: plan_bdpa and record, the plan cached per (device, shape, options).
VKATTN_API TextCallInfo bdpa_attention(Recorder& rec, const BdpaParams& params, const BdpaTensors& tensors,
                                       const PlanOptions& options);
VKATTN_API TextCallInfo bdpa_attention(Recorder& rec, const BdpaParams& params, const BdpaTensors& tensors);

// Host-side check of an index (B x kv_capacity x 3 values): for the first
// kv_len[b] entries of each sequence, basis rows below num_basis, residual
// rows below num_residual and (with RoPE) positions below rope_positions. The
// kernel also skips entries that fail these, so none is ever followed.
VKATTN_API void check_bdpa_index(const BdpaParams& params, const std::vector<uint32_t>& index);

// The builder: from a contiguous pre-RoPE cache k, v [B, C, Hkv, D] (position
// j of sequence b in slot j) and its token ids, a BDPA cache with one basis row
// per distinct token id (the mean of its rows, in token-id order), one residual
// row per position (row b * C + j) and index entries (basis row, b * C + j, j);
// entries past kv_len[b] name basis row 2^32 - 1, so attention never follows them.
struct VKATTN_API BdpaBuildParams {
  uint32_t batch = 1;
  uint32_t kv_capacity = 0;  // C slots per sequence
  uint32_t num_kv_heads = 1;
  uint32_t head_dim = 64;  // a multiple of 8, at most 256
  uint32_t vocab_size = 0; // at most 2^24; token ids must be below it (others are skipped: no query sees them)
  std::vector<uint32_t> kv_len{0};
  uint32_t kv_len_of(uint32_t b) const { return kv_len.size() == 1 ? kv_len[0] : kv_len.at(b); }
  uint64_t max_rows() const { return uint64_t(batch) * kv_capacity; }  // basis and residual rows the outputs hold
};

struct BdpaBuildTensors {
  Tensor k, v;         // [B, C, Hkv, D] f32 | f16 | bf16, contiguous
  Tensor token_ids;    // u32 [B, C]
  Tensor kv_len;       // optional u32 [B]
  // Outputs, max_rows() rows each: basis_k/v (dtype of your choice: f32, f16, bf16),
  // residual_k/v (i8), residual_k/v_scale (f32), index (u32 [B, C, 3]).
  Tensor basis_k, basis_v, residual_k, residual_v, residual_k_scale, residual_v_scale, index;
  Tensor num_basis;    // u32 [1] written: basis rows used
};

// Records the build (no submit, no host read-back).
VKATTN_API void bdpa_build(Recorder& rec, const BdpaBuildParams& params, const BdpaBuildTensors& tensors);

}  // namespace vkattn

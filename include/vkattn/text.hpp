// Text-decoder attention: prefill and decode over contiguous, ring and paged
// KV caches (see docs/data-contract.md for the full contract).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vkattn/caps.hpp"
#include "vkattn/export.hpp"
#include "vkattn/tensor.hpp"
#include "vkattn/types.hpp"

namespace vkattn {

enum class KvLayout : uint8_t { contiguous, ring, paged };
VKATTN_API std::string_view to_string(KvLayout l);
VKATTN_API KvLayout kv_layout_from_string(std::string_view name);  // throws Error naming "layout"

// Shape and semantics of one attention call. Per-sequence values (kv_len,
// start_pos, kv_start) hold either one value for every sequence or one per
// sequence; a GPU buffer given in TextAttentionTensors replaces them at run time.
struct VKATTN_API TextAttentionParams {
  uint32_t batch = 1;         // B sequences
  uint32_t seq_len = 1;       // S query rows per sequence (1 = decode)
  uint32_t num_heads = 1;     // H query heads
  uint32_t num_kv_heads = 1;  // Hkv; H % Hkv == 0 (GQA/MQA)
  uint32_t head_dim = 64;     // D
  bool causal = false;        // hide keys after the query position
  uint32_t window = 0;        // > 0: hide keys at or before query_pos - window
  float softcap = 0.0f;       // > 0: score = softcap * tanh(score / softcap)
  std::optional<float> scale; // default 1/sqrt(head_dim)
  KvLayout layout = KvLayout::contiguous;
  uint32_t kv_capacity = 0;   // contiguous/ring: C slots per sequence; paged: page_size
  uint32_t num_pages = 0;     // paged: P pages in the pool
  uint32_t max_pages = 0;     // paged: page-table row length
  std::vector<uint32_t> kv_len{0};     // keys per sequence
  std::vector<uint32_t> start_pos{0};  // absolute position of query row 0
  std::vector<uint32_t> kv_start{0};   // absolute position of key 0

  float effective_scale() const;
  uint32_t kv_len_of(uint32_t b) const { return kv_len.size() == 1 ? kv_len[0] : kv_len.at(b); }
  uint32_t start_pos_of(uint32_t b) const { return start_pos.size() == 1 ? start_pos[0] : start_pos.at(b); }
  uint32_t kv_start_of(uint32_t b) const { return kv_start.size() == 1 ? kv_start[0] : kv_start.at(b); }
};

// The tensors of one call. Optional u32 [B] buffers replace the matching
// per-sequence params on the GPU, so one recording replays across decode steps.
struct TextAttentionTensors {
  Tensor q;           // [B, S, H, D] f32 | f16 | bf16
  Tensor k, v;        // [B, C, Hkv, D], or paged pool [P, page_size, Hkv, D]; f32 | f16 | bf16
  Tensor out;         // [B, S, H, D] f32 | f16 | bf16
  Tensor page_table;  // paged: u32 [B, max_pages]
  Tensor kv_len;      // optional u32 [B]
  Tensor start_pos;   // optional u32 [B]
  Tensor kv_start;    // optional u32 [B]
  Tensor indirect;    // optional u32 [3]: workgroup counts read on the GPU
};

// What a recorded call chose.
struct TextCallInfo {
  std::string variant;
  std::string reason;
  uint32_t workgroups[3] = {0, 0, 0};  // of the attention dispatch (what `indirect` must hold)
  uint32_t splits = 1;
  std::vector<std::string> warnings;
};

class Recorder;
class Context;
struct PlanOptions;
struct Plan;

// What planning needs to know about a call's tensors.
struct TextTensorTypes {
  DType q = DType::f32, kv = DType::f32, out = DType::f32;
  // kv_len read from a GPU buffer: the split grid is sized for the cache's
  // capacity, so one recording stays fast at any length a replay reads.
  bool kv_len_on_gpu = false;
};
VKATTN_API TextTensorTypes text_tensor_types(const TextAttentionTensors& tensors);

// The plan of one call on a device (no GPU work; `caps` may come from a caps
// file). Throws Error for invalid params or a rejected strict override.
VKATTN_API Plan plan_text(const DeviceCaps& caps, const TextAttentionParams& params, const TextTensorTypes& types,
                          const PlanOptions& options);
// Records a plan (no submit). A plan that is not this call's on this device
// (another shape, dtype or device, or edited) is an Error naming what differs.
VKATTN_API TextCallInfo record(Recorder& rec, const Plan& plan, const TextAttentionParams& params,
                               const TextAttentionTensors& tensors);

// Validates, plans and records one attention call (no submit): plan_text and
// record in one, with the plan cached per (device, shape, options) so a call
// seen before on this thread does no planning.
VKATTN_API TextCallInfo text_attention(Recorder& rec, const TextAttentionParams& params,
                                       const TextAttentionTensors& tensors, const PlanOptions& options);
VKATTN_API TextCallInfo text_attention(Recorder& rec, const TextAttentionParams& params,
                                       const TextAttentionTensors& tensors);
// Records and runs one call now, waiting for it.
VKATTN_API TextCallInfo run_text_attention(Context& ctx, const TextAttentionParams& params,
                                           const TextAttentionTensors& tensors, const PlanOptions& options);

// Host-side check of a paged-KV page table (entries < num_pages); the kernels
// also mask out-of-range entries read from a GPU table, so none is ever followed.
VKATTN_API void check_page_table(const TextAttentionParams& params, const std::vector<uint32_t>& table);

}  // namespace vkattn

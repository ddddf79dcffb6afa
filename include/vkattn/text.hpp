// Text-decoder attention: prefill and decode over contiguous, ring, paged and
// tiered (hot/cold) KV caches (see docs/data-contract.md for the full contract).
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

// tiered: the most recent hot_window keys of each sequence in an f16 hot ring
// (hot_k, hot_v), the older ones in a cold tier laid out as cold_layout.
enum class KvLayout : uint8_t { contiguous, ring, paged, tiered };
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
  uint32_t kv_capacity = 0;   // contiguous/ring: C slots per sequence; paged: page_size (tiered: of the cold tier)
  uint32_t num_pages = 0;     // paged: P pages in the pool
  uint32_t max_pages = 0;     // paged: page-table row length
  // tiered: keys j >= kv_len - min(kv_len, hot_window) are read from hot slot
  // position % hot_window, the others from the cold tier (contiguous or paged).
  uint32_t hot_window = 0;
  KvLayout cold_layout = KvLayout::contiguous;
  std::vector<uint32_t> kv_len{0};     // keys per sequence
  std::vector<uint32_t> start_pos{0};  // absolute position of query row 0
  std::vector<uint32_t> kv_start{0};   // absolute position of key 0
  // Quantized K/V (i8 or i4 caches, see vkattn/kvcache.hpp): 0 for one scale
  // per (token, KV head) row, 32 for one per 32 elements along head_dim.
  uint32_t kv_quant_group = 0;

  float effective_scale() const;
  // The layout the K/V slots (the cold tier's, for tiered) are addressed by.
  KvLayout slot_layout() const { return layout == KvLayout::tiered ? cold_layout : layout; }
  uint32_t kv_len_of(uint32_t b) const { return kv_len.size() == 1 ? kv_len[0] : kv_len.at(b); }
  uint32_t start_pos_of(uint32_t b) const { return start_pos.size() == 1 ? start_pos[0] : start_pos.at(b); }
  uint32_t kv_start_of(uint32_t b) const { return kv_start.size() == 1 ? kv_start[0] : kv_start.at(b); }
};

// The tensors of one call. Optional u32 [B] buffers replace the matching
// per-sequence params on the GPU, so one recording replays across decode steps.
struct TextAttentionTensors {
  Tensor q;           // [B, S, H, D] f32 | f16 | bf16
  Tensor k, v;        // [B, C, Hkv, D], or paged pool [P, page_size, Hkv, D]; f32 | f16 | bf16 | i8 | i4
                      // (tiered: the cold tier, f16 | bf16 | i8 | i4)
  Tensor hot_k, hot_v;  // tiered: the hot ring, f16 [B, hot_window, Hkv, D]
  Tensor out;         // [B, S, H, D] f32 | f16 | bf16
  Tensor page_table;  // paged: u32 [B, max_pages]
  Tensor kv_len;      // optional u32 [B]
  Tensor start_pos;   // optional u32 [B]
  Tensor kv_start;    // optional u32 [B]
  Tensor indirect;    // optional u32 [3]: workgroup counts read on the GPU
  Tensor k_scale, v_scale;  // i8/i4 K/V: f16 [B, C, Hkv] (or [P, page_size, Hkv]), x groups with kv_quant_group
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
  // K/V pools past one storage-buffer binding (or past 32-bit element
  // indices), read through their buffer device addresses by the kernel built that way.
  bool kv_by_address = false;
  // Workgroup counts read from a GPU buffer (TextAttentionTensors::indirect):
  // a split call then keeps its reduce dispatch, since the last split of a
  // row cannot know how many the count leaves out.
  bool indirect = false;
};
// The types of `tensors`, and whether `caps`'s device reads their K/V by address.
VKATTN_API TextTensorTypes text_tensor_types(const TextAttentionTensors& tensors, const DeviceCaps& caps);

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

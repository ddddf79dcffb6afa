// Chooses a text-attention variant for a device and call shape: a pure
// function of DeviceCaps, so it is tested on synthetic devices.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "planner/text_variants.hpp"
#include "vkattn/caps.hpp"
#include "vkattn/plan.hpp"
#include "vkattn/text.hpp"

namespace vkattn::planner {

// What the planner needs to know about one call.
struct TextShape {
  uint32_t batch = 1, seq_len = 1, num_heads = 1, num_kv_heads = 1, head_dim = 64;
  uint32_t kv_len = 0;  // the longest sequence's (a hint when lengths come from the GPU)
  DType q = DType::f32, kv = DType::f32;
  bool tiered = false;  // K/V in an f16 hot ring over a cold tier of `kv`
  bool contiguous = true;      // K/V slots in the contiguous layout (not ring, paged or tiered)
  bool kv_by_address = false;  // K/V pools read through buffer device addresses (past one binding)
  DType out = DType::f32;      // the output's dtype (text_shape_of: Q's)
  // The longest KV any replay of the recording can read: the cache's capacity
  // when lengths come from a GPU buffer (0: kv_len). Split-KV grids are sized
  // for it, so a recording made at a short length stays fast at a long one.
  uint32_t kv_len_bound = 0;
  uint32_t kv_len_max() const { return kv_len_bound > kv_len ? kv_len_bound : kv_len; }
  Phase phase() const { return seq_len == 1 ? Phase::decode : Phase::prefill; }
};

// Workgroup geometry of a variant on a device; becomes specialization constants.
// The planner's view of a call: its shape and the dtypes of Q and K/V. With
// `lengths_on_gpu` (kv_len read from a GPU buffer at run time) kv_len_bound is
// the cache's capacity, the most keys any replay can walk.
TextShape text_shape_of(const TextAttentionParams& p, DType q, DType kv, bool lengths_on_gpu = false);

struct TextGeometry {
  uint32_t q_pos = 1;        // query positions per workgroup
  uint32_t head_group = 1;   // query heads per workgroup (one KV head)
  uint32_t tile_keys = 16;
  uint32_t workgroup_size = 64;
  uint32_t acc_chunks = 1;
  uint32_t splits = 1;
  uint32_t shared_bytes = 0;
  uint32_t required_subgroup_size = 0;
  uint32_t key_lanes = 0;    // registers_flash: lanes sharing one key row
  uint32_t kv_stages = 0;    // flash_fragments: K/V tile buffers in shared memory (0: other engines)
  uint32_t merge_pool_vec4s = 0;  // engines whose last split combines: shared vec4s that merge may borrow
  uint32_t rows() const { return q_pos * head_group; }
};

struct TextPlan {
  const TextVariant* variant = nullptr;
  TextGeometry geometry;
  std::string reason;                     // why the winner won
  std::vector<PlanCandidate> candidates;  // every row of the phase and dtypes, with why
  std::vector<std::string> warnings;      // override fallbacks
};

// Geometry, or the reason the variant cannot run this call on this device.
struct GeometryOrReason {
  std::optional<TextGeometry> geometry;
  std::string reason;
};
GeometryOrReason text_geometry(const TextVariant& v, const DeviceCaps& caps, const TextShape& shape);
// The registers_flash engine's part of text_geometry (flash_geometry.cpp).
GeometryOrReason flash_geometry(const TextVariant& v, const DeviceCaps& caps, const TextShape& shape, TextGeometry g);
// The streamed_fragments engine's part of text_geometry (stream_geometry.cpp).
GeometryOrReason stream_geometry(const TextVariant& v, const DeviceCaps& caps, const TextShape& shape);

// Throws Error when an override is rejected in strict mode or names no variant.
TextPlan plan_text(const DeviceCaps& caps, const TextShape& shape, const PlanOptions& options = {});
// The same without PlanOptions' tuning overrides (rows, splits, tile_keys).
TextPlan plan_untuned(const DeviceCaps& caps, const TextShape& shape, const PlanOptions& options = {});

// The choice as a public Plan without its dispatches (variant, reason,
// candidates, warnings, geometry); the ops add the dispatches.
Plan public_view(const TextPlan& plan);
// vkattn::explain and to_json of that view.
std::string explain(const TextPlan& plan);
std::string plan_to_json(const TextPlan& plan);

}  // namespace vkattn::planner

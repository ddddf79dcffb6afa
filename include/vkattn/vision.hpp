// Vision-tower attention: bidirectional attention over image patches and the
// 2D position-embedding add (Gemma 3 / Gemma 4 vision encoders).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vkattn/caps.hpp"
#include "vkattn/export.hpp"
#include "vkattn/tensor.hpp"
#include "vkattn/types.hpp"

namespace vkattn {

class Recorder;
class Context;
struct PlanOptions;

// Row order of Q, K, V and the output.
enum class VisionLayout : uint8_t {
  phd,  // [P, H, D]: patch-major, as projections produce it
  hpd,  // [H, P, D]: head-major
};
VKATTN_API std::string_view to_string(VisionLayout l);
VKATTN_API VisionLayout vision_layout_from_string(std::string_view name);  // throws Error naming "layout"

// out[p, h] = sum_t softmax_t(scale * q[p, h] . k[t, h]) v[t, h], every patch
// seeing every patch.
struct VKATTN_API VisionAttentionParams {
  uint32_t patches = 0;       // P
  uint32_t num_heads = 1;     // H
  uint32_t head_dim = 64;     // D: a multiple of 8, at most 256
  std::optional<float> scale; // default 1/sqrt(D); Gemma 4 vision uses 1.0
  VisionLayout layout = VisionLayout::phd;
  float effective_scale() const;
};

struct VisionAttentionTensors {
  Tensor q, k, v;  // [P, H, D] (phd) or [H, P, D] (hpd); f32 | f16, all one dtype
  Tensor out;      // same shape; f32 | f16
};

struct VisionCallInfo {
  std::string variant;
  std::string reason;
  std::vector<std::string> warnings;
  uint32_t dispatches = 0;  // 1, or 5 for the head-major variant on PHD tensors (4 transposes)
};

struct Plan;

// What planning needs to know about a call's tensors.
struct VisionTensorTypes {
  DType in = DType::f32;   // Q, K, V
  DType out = DType::f32;
};
VKATTN_API VisionTensorTypes vision_tensor_types(const VisionAttentionTensors& tensors);

// The plan of one call on a device (no GPU work). PlanOptions' path, splits
// and tile_keys have no meaning here and are an Error naming the option.
VKATTN_API Plan plan_vision(const DeviceCaps& caps, const VisionAttentionParams& params,
                            const VisionTensorTypes& types, const PlanOptions& options);
// Records a plan (no submit); a plan that is not this call's on this device is an Error.
VKATTN_API VisionCallInfo record(Recorder& rec, const Plan& plan, const VisionAttentionParams& params,
                                 const VisionAttentionTensors& tensors);

// Validates, plans and records one call (no submit): plan_vision and record,
// the plan cached per (device, shape, options).
VKATTN_API VisionCallInfo vision_attention(Recorder& rec, const VisionAttentionParams& params,
                                           const VisionAttentionTensors& tensors, const PlanOptions& options);
VKATTN_API VisionCallInfo vision_attention(Recorder& rec, const VisionAttentionParams& params,
                                           const VisionAttentionTensors& tensors);

// In place: hidden[p, d] += table[0, p % patches_x, d] + table[1, p / patches_x, d].
struct PosEmbedParams {
  uint32_t patches = 0;      // P
  uint32_t hidden_size = 0;  // hidden width (even for f16)
  uint32_t pos_size = 0;     // rows per axis in the table
  uint32_t patches_x = 0;    // patches per image row; every x and y must be < pos_size
};
struct PosEmbedTensors {
  Tensor hidden;  // [P, hidden] f32 | f16, updated in place
  Tensor table;   // [2, pos_size, hidden], the dtype of hidden: x rows then y rows
};
VKATTN_API void pos_embed_add(Recorder& rec, const PosEmbedParams& params, const PosEmbedTensors& tensors);

}  // namespace vkattn

// Audio Conformer block-local attention (Gemma 3n / Gemma 4 audio encoders).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vkattn/caps.hpp"
#include "vkattn/export.hpp"
#include "vkattn/types.hpp"
#include "vkattn/tensor.hpp"

namespace vkattn {

// Shape and semantics of one block-local attention call over T frames.
//
// Frames are cut into blocks of W = chunk queries; block u sees the context
// frames [uW - P, uW + W + F) (C = W + P + F slots). Query t_q sees key t_k
// iff 0 <= t_k < T, t_k - t_q <= F, and t_q - t_k <= P (include_past_edge) or
// <= P - 1 (otherwise). The logit is
//   z = q~ . k~ + q~ . R[t_k - t_q + P],   z = logit_cap * tanh(z / logit_cap),
// with q~ = q * D^-1/2 / ln 2 * softplus(per_dim_scale), k~ as below, and R
// the projected relative-position table [P + F + 1, H, D] (row s = c - r for
// query r and context slot c of a block). A query seeing no key outputs zeros.
struct AudioAttentionParams {
  uint32_t frames = 0;      // T
  uint32_t num_heads = 1;   // H
  uint32_t head_dim = 128;  // D
  uint32_t chunk = 12;      // W: queries per block
  uint32_t max_past = 12;   // P: past frames a block's context reaches back
  uint32_t max_future = 0;  // F: future frames a query may see
  float logit_cap = 50.0f;  // > 0: z = cap * tanh(z / cap); 0: no cap
  bool scale_keys = true;   // Gemma 4: k~ = k * ln(1 + e) / ln 2; Gemma 3n: k~ = k
  // Past reach: t_q - t_k in [0, P] when true (Gemma 3n, Ollama), [0, P - 1]
  // when false (Gemma 4 in transformers).
  bool include_past_edge = false;
};

// The tensors of one call; Q, K, V, rel_pos share one dtype (f32 | f16).
struct AudioAttentionTensors {
  Tensor q, k, v;         // [T, H, D], unpadded
  Tensor per_dim_scale;   // f32 [D], raw (softplus is applied by the kernel)
  Tensor rel_pos;         // R: [P + F + 1, H, D]
  Tensor out;             // [T, H, D] f32 | f16
};

struct AudioCallInfo {
  std::string variant;
  std::string reason;
  std::vector<std::string> warnings;
};

class Recorder;
struct PlanOptions;

struct Plan;

// What planning needs to know about a call's tensors.
struct AudioTensorTypes {
  DType in = DType::f32;   // Q, K, V, rel_pos
  DType out = DType::f32;
};
VKATTN_API AudioTensorTypes audio_tensor_types(const AudioAttentionTensors& tensors);

// The plan of one call on a device (no GPU work). The options used are
// `variant` (one of audio_variant_names()) with `strict`; path, splits and
// tile_keys have no meaning here and are an Error naming the option.
VKATTN_API Plan plan_audio(const DeviceCaps& caps, const AudioAttentionParams& params, const AudioTensorTypes& types,
                           const PlanOptions& options);
// Records a plan (no submit); a plan that is not this call's on this device is an Error.
VKATTN_API AudioCallInfo record(Recorder& rec, const Plan& plan, const AudioAttentionParams& params,
                                const AudioAttentionTensors& tensors);

// Validates, plans and records one call (no submit): plan_audio and record,
// the plan cached per (device, shape, options).
VKATTN_API AudioCallInfo audio_attention(Recorder& rec, const AudioAttentionParams& params,
                                         const AudioAttentionTensors& tensors, const PlanOptions& options);
VKATTN_API AudioCallInfo audio_attention(Recorder& rec, const AudioAttentionParams& params,
                                         const AudioAttentionTensors& tensors);
VKATTN_API std::vector<std::string> audio_variant_names();

}  // namespace vkattn

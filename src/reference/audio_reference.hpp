// Float64 oracle for the audio Conformer's block-local attention with
// relative-position logits and a logit cap (semantics: vkattn/audio.hpp).
#pragma once

#include <span>
#include <vector>

#include "vkattn/audio.hpp"

namespace vkattn::reference {

// q, k, v: [T, H, D], unpadded; per_dim_scale: [D] raw (softplus is applied
// here); rel_pos: R, [P + F + 1, H, D]. Returns [T, H, D]. Throws Error naming
// the parameter on a size mismatch, a zero head count, head size or chunk, or
// a negative or non-finite logit_cap.
std::vector<double> audio_attention(const AudioAttentionParams& p, std::span<const float> q,
                                    std::span<const float> k, std::span<const float> v,
                                    std::span<const float> per_dim_scale, std::span<const float> rel_pos);

}  // namespace vkattn::reference

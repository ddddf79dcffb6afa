// Argument checks for text attention, before anything reaches the GPU.
#pragma once

#include "vkattn/caps.hpp"
#include "vkattn/text.hpp"

namespace vkattn::text {

// Throws Error naming the parameter, the expected and the actual value.
void validate_params(const TextAttentionParams& p);
void validate_tensors(const TextAttentionParams& p, const TextAttentionTensors& t, const DeviceCaps& caps);

}  // namespace vkattn::text

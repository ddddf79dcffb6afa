// Argument checks for text attention, before anything reaches the GPU.
#pragma once

#include <array>

#include "vkattn/caps.hpp"
#include "vkattn/text.hpp"

namespace vkattn::text {

// Throws Error naming the parameter, the expected and the actual value.
void validate_params(const TextAttentionParams& p);
void validate_tensors(const TextAttentionParams& p, const TextAttentionTensors& t, const DeviceCaps& caps);

// Element strides of dims 0-2 of a 4-D q/k/v/out tensor of shape `want`, as the
// kernels take them; throws Error naming `name` if they cannot.
using RowStrides = std::array<uint32_t, 3>;
RowStrides row_strides(const char* name, const Tensor& t, const Shape& want);

}  // namespace vkattn::text

// Argument checks for the vision ops, before anything reaches the GPU.
#pragma once

#include <optional>

#include "vkattn/caps.hpp"
#include "vkattn/vision.hpp"

namespace vkattn::vision {

// Throws Error naming the parameter, the expected and the actual value.
void validate(const VisionAttentionParams& p, const VisionAttentionTensors& t, const DeviceCaps& caps);
void validate(const PosEmbedParams& p, const PosEmbedTensors& t, const DeviceCaps& caps);

// Shared by the vision and audio ops: a tensor of `want` shape whose dtype is
// one of f32/f16 (or exactly `only` when given), within the device's buffer range.
void check_tensor(const char* name, const Tensor& t, const Shape& want, const DeviceCaps& caps,
                  std::optional<DType> only = std::nullopt);

}  // namespace vkattn::vision

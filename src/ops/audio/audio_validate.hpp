// Argument checks for audio block-local attention, before anything reaches the GPU.
#pragma once

#include "vkattn/audio.hpp"
#include "vkattn/caps.hpp"

namespace vkattn::audio {

// Throws Error naming the parameter, the expected and the actual value.
void validate(const AudioAttentionParams& p, const AudioAttentionTensors& t, const DeviceCaps& caps);

}  // namespace vkattn::audio

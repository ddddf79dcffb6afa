// Argument checks for BDPA attention and its builder, before anything reaches the GPU.
#pragma once

#include "vkattn/bdpa.hpp"
#include "vkattn/caps.hpp"

namespace vkattn::bdpa {

// Throw Error naming the parameter, the expected and the actual value.
void validate_params(const BdpaParams& p);
void validate_tensors(const BdpaParams& p, const BdpaTensors& t, const DeviceCaps& caps);
void validate_build(const BdpaBuildParams& p, const BdpaBuildTensors& t, const DeviceCaps& caps);

}  // namespace vkattn::bdpa

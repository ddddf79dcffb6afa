// The plan of a BDPA call as JSON, for the bindings' "can this device run it"
// queries (vkattn_plan_bdpa, the Python module's plan_bdpa): the public plan
// (vkattn::plan_bdpa) of the call as the bindings describe it.
#pragma once

#include <string>

#include "vkattn/bdpa.hpp"
#include "vkattn/caps.hpp"
#include "vkattn/plan.hpp"

namespace vkattn::capi {

// Validates `params` and plans the call as bdpa_attention does with host
// lengths; throws Error (unsupported, with the reason) when no variant runs it.
std::string bdpa_plan_json(const DeviceCaps& caps, const BdpaParams& params, DType q, DType basis,
                           const PlanOptions& options);

}  // namespace vkattn::capi

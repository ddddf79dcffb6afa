#include "capi/bdpa_plan_query.hpp"

namespace vkattn::capi {

std::string bdpa_plan_json(const DeviceCaps& caps, const BdpaParams& p, DType q, DType basis,
                           const PlanOptions& options) {
  // Host lengths, as bdpa_attention plans a call without a length buffer; the output in Q's dtype.
  return to_json(plan_bdpa(caps, p, BdpaTensorTypes{q, basis, q, false}, options));
}

}  // namespace vkattn::capi

#include "capi/bdpa_plan_query.hpp"

#include <algorithm>

#include "ops/bdpa/bdpa_validate.hpp"
#include "planner/bdpa_planner.hpp"

namespace vkattn::capi {

std::string bdpa_plan_json(const DeviceCaps& caps, const BdpaParams& p, DType q, DType basis,
                           const PlanOptions& options) {
  bdpa::validate_params(p);
  // For the longest sequence, as bdpa_attention sizes its splits with host lengths.
  const uint32_t longest = *std::max_element(p.kv_len.begin(), p.kv_len.end());
  const planner::BdpaShape shape{p.batch, p.seq_len, p.num_heads, p.num_kv_heads, p.head_dim, longest, q, basis};
  return planner::plan_to_json(planner::plan_bdpa(caps, shape, options));
}

}  // namespace vkattn::capi

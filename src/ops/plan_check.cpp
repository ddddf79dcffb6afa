#include "ops/plan_check.hpp"

namespace vkattn::ops {

std::string first_difference(const Plan& want, const Plan& got) {
  if (want.variant != got.variant) return fmt::format("variant is {} (this call's: {})", got.variant, want.variant);
  if (!(want.geometry == got.geometry)) return "geometry differs";
  if (want.dispatches.size() != got.dispatches.size())
    return fmt::format("dispatch count is {} (this call's: {})", got.dispatches.size(), want.dispatches.size());
  for (size_t i = 0; i < want.dispatches.size(); ++i)
    if (!(want.dispatches[i] == got.dispatches[i]))
      return fmt::format("dispatches[{}] differ (module, specialization constants or grid)", i);
  return fmt::format("scratch_bytes is {} (this call's: {})", got.scratch_bytes, want.scratch_bytes);
}

}  // namespace vkattn::ops

// A paged KV pool larger than one storage-buffer binding: the kernels read it
// through buffer device addresses. Only the pages the call reads hold data
// (spread over the whole pool, the last page included), so a 20 GiB pool costs
// the host and the oracle no more than the keys themselves.
#pragma once

#include <string>
#include <vector>

#include "check/check_case.hpp"
#include "check/text_cases.hpp"

namespace vkattn::check {

struct LargePoolCase {
  std::string name;
  TextCase call;            // paged, or tiered with a paged cold tier; num_pages is set from pool_bytes
  uint64_t pool_bytes = 0;  // bytes of K (and of V) at least
};

CheckResult run_large_pool_case(Context& ctx, const LargePoolCase& c, const RunOptions& options = {});

// Cases on every text engine with pools of `pool_bytes` each for K and V.
std::vector<LargePoolCase> large_pool_cases(const DeviceCaps& caps, uint64_t pool_bytes, bool every_engine);

}  // namespace vkattn::check

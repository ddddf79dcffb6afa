// Size arithmetic on numbers that come from the caller (shapes, strides, page
// counts): a result past 64 bits is an Error naming what was being computed,
// never a wrapped size that a later bounds check would accept.
#pragma once

#include <cstdint>
#include <string_view>

namespace vkattn {

uint64_t checked_mul(uint64_t a, uint64_t b, std::string_view what);
uint64_t checked_add(uint64_t a, uint64_t b, std::string_view what);

}  // namespace vkattn

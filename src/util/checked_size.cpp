#include "util/checked_size.hpp"

#include <fmt/format.h>

#include "vkattn/error.hpp"

namespace vkattn {

uint64_t checked_mul(uint64_t a, uint64_t b, std::string_view what) {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    throw Error(ErrorKind::invalid_argument, fmt::format("{}: expected a size below 2^64, got {} x {}", what, a, b));
  return r;
}

uint64_t checked_add(uint64_t a, uint64_t b, std::string_view what) {
  uint64_t r;
  if (__builtin_add_overflow(a, b, &r))
    throw Error(ErrorKind::invalid_argument, fmt::format("{}: expected a size below 2^64, got {} + {}", what, a, b));
  return r;
}

}  // namespace vkattn

// The oracle's own argument checks: a bad shape or size is an invalid_argument
// error naming the parameter, expected and actual, like the library's.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <span>
#include <string>

#include "vkattn/error.hpp"

namespace vkattn::reference {

[[noreturn]] inline void invalid(const std::string& message) { throw Error(ErrorKind::invalid_argument, message); }

template <typename T>
void require_size(std::span<const T> span, uint64_t expected, const char* name, const std::string& shape) {
  if (span.size() != expected)
    invalid(fmt::format("{}: expected {} elements ({}), got {}", name, expected, shape, span.size()));
}

}  // namespace vkattn::reference

// Catching the vkattn::Error a call must throw, for tests that then check its
// kind and message.
#pragma once

#include <gtest/gtest.h>

#include "vkattn/error.hpp"

namespace vkattn::testing {

// Runs f and returns the Error it threw; records a failure (and returns an
// Error of kind vulkan saying so) when it threw none.
template <class F>
Error expect_error(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "expected vkattn::Error, none thrown";
  return Error(ErrorKind::vulkan, "none thrown");
}

}  // namespace vkattn::testing

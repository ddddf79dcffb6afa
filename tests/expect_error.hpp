// Catching the vkattn::Error a call must throw, for tests that then check its
// kind and message.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

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

// Runs f, which must throw Error of `kind` whose message holds every piece.
inline void expect_error(const std::function<void()>& f, ErrorKind kind, const std::vector<std::string>& pieces) {
  const Error e = expect_error(f);
  EXPECT_EQ(e.kind(), kind) << e.what();
  for (const auto& piece : pieces) EXPECT_THAT(e.what(), ::testing::HasSubstr(piece));
}

}  // namespace vkattn::testing

// One Vulkan context for all GPU tests in the process (device from
// $VKATTN_DEVICE, validation from $VKATTN_VALIDATION, both set by ctest).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "vkattn/context.hpp"
#include "vkattn/plan.hpp"

namespace vkattn::testing {

Context& shared_context();

// A parameterised test's name: its index and case name, in the characters gtest allows.
std::string param_test_name(size_t index, const std::string& case_name);

// Options that force one variant (strict: a rejected override is an error).
inline PlanOptions forced(const std::string& variant) {
  PlanOptions o;
  o.variant = variant;
  o.strict = true;
  return o;
}

// Fails the current test if the validation layer reported anything since
// the fixture started.
class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override { messages_before_ = Context::validation_messages(); }
  void TearDown() override {
    EXPECT_EQ(Context::validation_messages(), messages_before_) << "the validation layer reported messages";
  }
  Context& ctx() { return shared_context(); }

 private:
  uint64_t messages_before_ = 0;
};

}  // namespace vkattn::testing

#include "test_context.hpp"

#include <memory>

namespace vkattn::testing {

Context& shared_context() {
  static std::unique_ptr<Context> ctx = std::make_unique<Context>();
  return *ctx;
}

}  // namespace vkattn::testing

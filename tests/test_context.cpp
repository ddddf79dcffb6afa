#include "test_context.hpp"

#include <memory>

#include "check/stderr_log.hpp"

namespace vkattn::testing {

namespace {
// Validation messages and warnings on stderr, so a failing test shows them.
const bool g_log_installed = (check::install_stderr_log(), true);
}  // namespace

Context& shared_context() {
  static std::unique_ptr<Context> ctx = std::make_unique<Context>();
  return *ctx;
}

}  // namespace vkattn::testing

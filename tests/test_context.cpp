#include "test_context.hpp"

#include <cctype>
#include <memory>
#include <string>

#include "check/stderr_log.hpp"

namespace vkattn::testing {

namespace {
// Validation messages and warnings on stderr, so a failing test shows them.
const bool g_log_installed = (check::install_stderr_log(), true);
}  // namespace

std::string param_test_name(size_t index, const std::string& case_name) {
  std::string n = std::to_string(index) + "_" + case_name;
  for (auto& ch : n)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

Context& shared_context() {
  static std::unique_ptr<Context> ctx = std::make_unique<Context>();
  return *ctx;
}

}  // namespace vkattn::testing

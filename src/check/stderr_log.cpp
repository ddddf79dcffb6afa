#include "check/stderr_log.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>

#include "vkattn/log.hpp"

namespace vkattn::check {

void install_stderr_log() {
  const bool selections = std::getenv("VKATTN_LOG") != nullptr;
  set_log_callback([selections](LogLevel level, std::string_view message) {
    if (level == LogLevel::info && !selections) return;
    if (level == LogLevel::info) fmt::print(stderr, "vkattn: {}\n", message);
    else fmt::print(stderr, "vkattn: {}: {}\n", to_string(level), message);
    std::fflush(stderr);
  });
}

}  // namespace vkattn::check

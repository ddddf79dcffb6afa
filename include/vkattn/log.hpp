// Where vkattn's messages go: a callback the host installs. The library
// itself never writes to stdout or stderr.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

#include "vkattn/export.hpp"

namespace vkattn {

enum class LogLevel : uint8_t {
  info,        // each kernel selection (op, variant, reason), once per process
  warning,     // a rejected override that fell back, once per distinct message
  validation,  // a Khronos validation-layer message (with validation enabled)
};
VKATTN_API std::string_view to_string(LogLevel level);

using LogCallback = std::function<void(LogLevel level, std::string_view message)>;

// Process-wide and thread-safe; the callback may be called from any thread
// that uses vkattn, one call at a time, and must not call vkattn itself. An
// empty callback (the default) drops the messages.
VKATTN_API void set_log_callback(LogCallback callback);

}  // namespace vkattn

// Sends a message to the host's log callback (vkattn/log.hpp), if any.
#pragma once

#include <string_view>

#include "vkattn/log.hpp"

namespace vkattn {

void log_message(LogLevel level, std::string_view message);

}  // namespace vkattn

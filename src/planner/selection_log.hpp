// Kernel selections and planner warnings, each reported once per process.
#pragma once

#include <string>

namespace vkattn::planner {

// Sent to the log callback (LogLevel::info) the first time; counted either way.
void log_selection_once(const std::string& op, const std::string& variant, const std::string& reason);
// Sent to the log callback (LogLevel::warning), once per distinct message.
void warn_once(const std::string& message);
// Selections logged so far ("op variant reason"), for tests.
size_t logged_selection_count();

}  // namespace vkattn::planner

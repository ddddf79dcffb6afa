#include "log.hpp"

#include <mutex>
#include <utility>

namespace vkattn {

namespace {
std::mutex g_log_mutex;
LogCallback g_log_callback;
}  // namespace

std::string_view to_string(LogLevel level) {
  switch (level) {
    case LogLevel::info: return "info";
    case LogLevel::warning: return "warning";
    case LogLevel::validation: return "validation";
  }
  return "?";
}

void set_log_callback(LogCallback callback) {
  std::lock_guard lock(g_log_mutex);
  g_log_callback = std::move(callback);
}

void log_message(LogLevel level, std::string_view message) {
  // Held while calling, so messages from several threads never interleave.
  std::lock_guard lock(g_log_mutex);
  if (g_log_callback) g_log_callback(level, message);
}

}  // namespace vkattn

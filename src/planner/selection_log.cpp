#include "planner/selection_log.hpp"

#include <fmt/format.h>

#include <mutex>
#include <set>

#include "log.hpp"

namespace vkattn::planner {

namespace {
std::mutex g_log_mutex;
std::set<std::string> g_selections;
std::set<std::string> g_warnings;
}  // namespace

void log_selection_once(const std::string& op, const std::string& variant, const std::string& reason) {
  std::lock_guard lock(g_log_mutex);
  if (!g_selections.insert(op + " " + variant + " " + reason).second) return;
  log_message(LogLevel::info, fmt::format("{}: {} ({})", op, variant, reason));
}

void warn_once(const std::string& message) {
  std::lock_guard lock(g_log_mutex);
  if (g_warnings.insert(message).second) log_message(LogLevel::warning, message);
}

size_t logged_selection_count() {
  std::lock_guard lock(g_log_mutex);
  return g_selections.size();
}

}  // namespace vkattn::planner

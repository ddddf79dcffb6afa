#include "planner/selection_log.hpp"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>

namespace vkattn::planner {

namespace {
std::mutex g_mutex;
std::set<std::string> g_selections;
std::set<std::string> g_warnings;
}  // namespace

void log_selection_once(const std::string& op, const std::string& variant, const std::string& reason) {
  std::lock_guard lock(g_mutex);
  if (!g_selections.insert(op + " " + variant + " " + reason).second) return;
  if (std::getenv("VKATTN_LOG")) std::fprintf(stderr, "vkattn: %s: %s (%s)\n", op.c_str(), variant.c_str(), reason.c_str());
}

void warn_once(const std::string& message) {
  std::lock_guard lock(g_mutex);
  if (g_warnings.insert(message).second) std::fprintf(stderr, "vkattn: warning: %s\n", message.c_str());
}

size_t logged_selection_count() {
  std::lock_guard lock(g_mutex);
  return g_selections.size();
}

}  // namespace vkattn::planner

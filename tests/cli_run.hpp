// Runs the built `vkattn` binary for the CLI tests (tests/cli_test.cpp,
// tests/bench_cli_test.cpp): exit status and stdout and stderr together.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

#include "test_paths.hpp"

namespace vkattn {

struct Result {
  int status = -1;
  std::string output;
};

// The command's stdout, with its stderr too unless `stdout_only`.
inline Result run(const std::string& args, bool stdout_only = false) {
  Result r;
  const std::string cmd = testing::cli_path() + " " + args + (stdout_only ? " 2>/dev/null" : " 2>&1");
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) r.output.append(buf, n);
  const int w = pclose(pipe);
  r.status = WIFEXITED(w) ? WEXITSTATUS(w) : -1;
  return r;
}

inline std::string last_line(const std::string& s) {
  std::string t = s;
  while (!t.empty() && t.back() == '\n') t.pop_back();
  const auto pos = t.rfind('\n');
  return pos == std::string::npos ? t : t.substr(pos + 1);
}

inline std::string line_starting(const std::string& s, const std::string& prefix) {
  size_t pos = 0;
  while (pos < s.size()) {
    size_t end = s.find('\n', pos);
    if (end == std::string::npos) end = s.size();
    if (s.compare(pos, prefix.size(), prefix) == 0) return s.substr(pos, end - pos);
    pos = end + 1;
  }
  return "";
}

}  // namespace vkattn

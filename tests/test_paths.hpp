// Files the tests use, found next to the test binary (the build folder holds
// the vkattn CLI and a copy of caps/), so the suite runs from any directory
// and from a build folder copied to another machine.
#pragma once

#include <string>

namespace vkattn::testing {

// `relative` inside the folder of the running test binary.
std::string build_path(const std::string& relative);
// The built vkattn CLI.
std::string cli_path();
// A capability file from caps/, e.g. caps_path("lavapipe.json").
std::string caps_path(const std::string& name);

}  // namespace vkattn::testing

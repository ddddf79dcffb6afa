#include "test_paths.hpp"

#include <filesystem>

namespace vkattn::testing {

std::string build_path(const std::string& relative) {
  static const std::filesystem::path dir = std::filesystem::canonical("/proc/self/exe").parent_path();
  return (dir / relative).string();
}

std::string cli_path() { return build_path("vkattn"); }

std::string caps_path(const std::string& name) { return build_path("caps/" + name); }

}  // namespace vkattn::testing

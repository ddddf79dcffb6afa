#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <mutex>
#include <string>

#include "vk/vulkan_functions.hpp"
#include "vkattn/error.hpp"

namespace vkattn {

#define VKATTN_DEFINE_VULKAN_FUNCTION(name) PFN_##name name = nullptr;
VKATTN_VULKAN_FUNCTIONS(VKATTN_DEFINE_VULKAN_FUNCTION)
#undef VKATTN_DEFINE_VULKAN_FUNCTION

namespace vk {

namespace {

std::once_flag g_once;
std::string g_failure;  // why loading failed, if it did

void load_once() {
  const char* custom = std::getenv("VKATTN_VULKAN_LIBRARY");
  const std::string path = custom && *custom ? custom : "libvulkan.so.1";
  // The library stays loaded for the process's lifetime.
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* why = dlerror();
    g_failure = fmt::format(
        "Vulkan loader: expected {} to load{}, got: {}; install the Debian package libvulkan1 (plus "
        "mesa-vulkan-drivers for the CPU device, lavapipe, or your GPU's Vulkan driver)",
        path, custom && *custom ? " (from $VKATTN_VULKAN_LIBRARY)" : "", why ? why : "not found");
    return;
  }
  // The loader exports every core entry point up to its version.
#define VKATTN_RESOLVE_VULKAN_FUNCTION(name)                                                              \
  name = reinterpret_cast<PFN_##name>(dlsym(lib, #name));                                                 \
  if (!name) {                                                                                            \
    g_failure = fmt::format("Vulkan loader {}: expected it to export {}, got none; install libvulkan1 1.3 " \
                            "or newer",                                                                   \
                            path, #name);                                                                 \
    return;                                                                                               \
  }
  VKATTN_VULKAN_FUNCTIONS(VKATTN_RESOLVE_VULKAN_FUNCTION)
#undef VKATTN_RESOLVE_VULKAN_FUNCTION
}

}  // namespace

void load_vulkan() {
  std::call_once(g_once, load_once);
  if (!g_failure.empty()) throw Error(ErrorKind::no_device, g_failure);
}

}  // namespace vk
}  // namespace vkattn

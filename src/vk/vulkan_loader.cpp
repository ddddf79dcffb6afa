#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
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

std::mutex g_mutex;
bool g_loaded = false;
std::string g_failure;  // why opening the default loader failed, if it did

// Opens the loader ($VKATTN_VULKAN_LIBRARY, else libvulkan.so.1) and resolves
// every entry point from its exports; the library stays loaded for the
// process's lifetime. Called with g_mutex held.
void open_default_loader() {
  const char* custom = std::getenv("VKATTN_VULKAN_LIBRARY");
  const std::string path = custom && *custom ? custom : "libvulkan.so.1";
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
  g_loaded = true;
}

// Commands vkGetInstanceProcAddr resolves with a null instance (Vulkan spec, "Command Function Pointers").
bool is_global_command(const char* name) {
  for (const char* g : {"vkCreateInstance", "vkEnumerateInstanceVersion", "vkEnumerateInstanceLayerProperties"})
    if (std::strcmp(name, g) == 0) return true;
  return false;
}

// Resolves every entry point through the host's vkGetInstanceProcAddr. Called with g_mutex held.
void resolve_through(PFN_vkGetInstanceProcAddr gipa, VkInstance instance) {
#define VKATTN_RESOLVE_VULKAN_FUNCTION(name)                                                                  \
  name = reinterpret_cast<PFN_##name>(gipa(is_global_command(#name) ? VK_NULL_HANDLE : instance, #name));     \
  if (!name)                                                                                                  \
    throw Error(ErrorKind::no_device,                                                                         \
                fmt::format("get_instance_proc_addr: expected it to resolve {}, got null", #name));
  VKATTN_VULKAN_FUNCTIONS(VKATTN_RESOLVE_VULKAN_FUNCTION)
#undef VKATTN_RESOLVE_VULKAN_FUNCTION
  vkGetInstanceProcAddr = gipa;
  g_loaded = true;
}

}  // namespace

void load_vulkan() {
  std::lock_guard lock(g_mutex);
  if (!g_loaded && g_failure.empty()) open_default_loader();
  if (!g_loaded) throw Error(ErrorKind::no_device, g_failure);
}

void load_vulkan(PFN_vkGetInstanceProcAddr host, VkInstance instance) {
  if (!host) return load_vulkan();
  std::lock_guard lock(g_mutex);
  if (!g_loaded) return resolve_through(host, instance);
  // Already loaded (an earlier context): the host's loader must be the same
  // one, since the entry points are shared by the whole process.
  if (reinterpret_cast<PFN_vkVoidFunction>(vkCreateInstance) != host(VK_NULL_HANDLE, "vkCreateInstance"))
    throw Error(ErrorKind::invalid_argument,
                "get_instance_proc_addr: expected the Vulkan loader this process's first vkattn context uses "
                "(one loader per process), got a different one");
}

}  // namespace vk
}  // namespace vkattn

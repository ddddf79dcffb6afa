#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <mutex>
#include <string>

#include "vk/volk.hpp"
#include "vkattn/error.hpp"

namespace vkattn::vk {

namespace {

std::mutex g_mutex;
bool g_loaded = false;
bool g_instance_functions = false;
std::string g_failure;  // why initialising with the default loader failed, if it did

const char* const kLoaderPackages =
    "install the Debian package libvulkan1 (plus mesa-vulkan-drivers for the CPU device, lavapipe, or your GPU's "
    "Vulkan driver)";

// $VKATTN_VULKAN_LIBRARY names a loader volk would not look for: it is opened
// here and handed to volk as a custom vkGetInstanceProcAddr; else volk opens
// the system's. The library stays loaded for the process's lifetime. Called
// with g_mutex held.
void initialise_default() {
  const char* custom = std::getenv("VKATTN_VULKAN_LIBRARY");
  if (!custom || !*custom) {
    if (volkInitialize() == VK_SUCCESS) {
      g_loaded = true;
      return;
    }
    g_failure = fmt::format("Vulkan loader: expected libvulkan.so.1 to load, got none; {}", kLoaderPackages);
    return;
  }
  void* lib = dlopen(custom, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* why = dlerror();
    g_failure = fmt::format("Vulkan loader: expected {} to load (from $VKATTN_VULKAN_LIBRARY), got: {}; {}", custom,
                            why ? why : "not found", kLoaderPackages);
    return;
  }
  auto gipa = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(lib, "vkGetInstanceProcAddr"));
  if (!gipa) {
    g_failure = fmt::format("Vulkan loader {}: expected it to export vkGetInstanceProcAddr, got none; {}", custom,
                            kLoaderPackages);
    return;
  }
  volkInitializeCustom(gipa);
  g_loaded = true;
}

}  // namespace

void load_vulkan() {
  std::lock_guard lock(g_mutex);
  if (!g_loaded && g_failure.empty()) initialise_default();
  if (!g_loaded) throw Error(ErrorKind::no_device, g_failure);
}

void load_vulkan(PFN_vkGetInstanceProcAddr host) {
  if (!host) return load_vulkan();
  std::lock_guard lock(g_mutex);
  if (!g_loaded) {
    volkInitializeCustom(host);
    if (!vkCreateInstance)
      throw Error(ErrorKind::no_device,
                  "get_instance_proc_addr: expected it to resolve vkCreateInstance, got null");
    g_loaded = true;
    return;
  }
  // Already loaded (an earlier context): the host's loader must be the same
  // one, since the instance-level entry points are shared by the whole process.
  if (reinterpret_cast<PFN_vkVoidFunction>(vkCreateInstance) != host(VK_NULL_HANDLE, "vkCreateInstance"))
    throw Error(ErrorKind::invalid_argument,
                "get_instance_proc_addr: expected the Vulkan loader this process's first vkattn context uses "
                "(one loader per process), got a different one");
}

void load_instance_functions(VkInstance instance) {
  std::lock_guard lock(g_mutex);
  if (g_instance_functions) return;
  volkLoadInstanceOnly(instance);
  if (!vkGetDeviceProcAddr || !vkCreateDevice)
    throw Error(ErrorKind::no_device, "Vulkan loader: expected it to resolve vkGetDeviceProcAddr and vkCreateDevice "
                                      "for the instance, got null");
  g_instance_functions = true;
}

}  // namespace vkattn::vk

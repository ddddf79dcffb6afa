#include "vk/instance.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cstring>
#include <string>

#include "log.hpp"
#include "vk/check.hpp"
#include "vk/volk.hpp"
#include "vkattn/error.hpp"

namespace vkattn::vk {

namespace {

std::atomic<uint64_t> g_validation_messages{0};

VKAPI_ATTR VkBool32 VKAPI_CALL on_validation_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                     VkDebugUtilsMessageTypeFlagsEXT,
                                                     const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
  if (severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
    ++g_validation_messages;
    log_message(LogLevel::validation, data->pMessage);
  }
  return VK_FALSE;
}

bool layer_available(const char* name) {
  uint32_t n = 0;
  vkEnumerateInstanceLayerProperties(&n, nullptr);
  std::vector<VkLayerProperties> layers(n);
  vkEnumerateInstanceLayerProperties(&n, layers.data());
  for (auto& l : layers)
    if (std::strcmp(l.layerName, name) == 0) return true;
  return false;
}

}  // namespace

Instance::Instance(bool validation) {
  load_vulkan();
  uint32_t api = 0;
  if (vkEnumerateInstanceVersion(&api) != VK_SUCCESS || api < VK_API_VERSION_1_2)
    throw Error(ErrorKind::no_device,
                fmt::format("Vulkan loader: expected version 1.2 or newer, got {}.{}; install libvulkan1",
                            VK_VERSION_MAJOR(api), VK_VERSION_MINOR(api)));
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "vkattn";
  app.pEngineName = "vkattn";
  app.apiVersion = VK_API_VERSION_1_3;
  std::vector<const char*> layers, extensions;
  if (validation) {
    const char* layer = "VK_LAYER_KHRONOS_validation";
    if (!layer_available(layer))
      throw Error(ErrorKind::no_device,
                  "validation: VK_LAYER_KHRONOS_validation requested but not installed (Debian package "
                  "vulkan-validationlayers)");
    layers.push_back(layer);
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  }
  VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  info.pApplicationInfo = &app;
  info.enabledLayerCount = static_cast<uint32_t>(layers.size());
  info.ppEnabledLayerNames = layers.data();
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  VkDebugUtilsMessengerCreateInfoEXT dbg{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  dbg.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  dbg.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                    VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  dbg.pfnUserCallback = on_validation_message;
  // Synchronization validation too, so a missing barrier fails the tests even
  // on devices that happen to run dispatches in order (lavapipe).
  VkValidationFeatureEnableEXT enables[] = {VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
  VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT, &dbg};
  features.enabledValidationFeatureCount = 1;
  features.pEnabledValidationFeatures = enables;
  if (validation) info.pNext = &features;
  VkResult r = vkCreateInstance(&info, nullptr, &instance_);
  if (r == VK_ERROR_INCOMPATIBLE_DRIVER)
    throw Error(ErrorKind::no_device,
                "Vulkan: no driver found (VK_ERROR_INCOMPATIBLE_DRIVER); install mesa-vulkan-drivers for the CPU "
                "device (lavapipe) or your GPU's Vulkan driver");
  check(r, "creating the Vulkan instance");
  load_instance_functions(instance_);
  if (validation) {
    auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkCreateDebugUtilsMessengerEXT"));
    if (create) check(create(instance_, &dbg, nullptr, &messenger_), "creating the validation messenger");
  }
}

Instance::~Instance() {
  if (messenger_) {
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
    if (destroy) destroy(instance_, messenger_, nullptr);
  }
  vkDestroyInstance(instance_, nullptr);
}

std::vector<VkPhysicalDevice> Instance::physical_devices() const {
  uint32_t n = 0;
  check(vkEnumeratePhysicalDevices(instance_, &n, nullptr), "enumerating devices");
  std::vector<VkPhysicalDevice> devices(n);
  check(vkEnumeratePhysicalDevices(instance_, &n, devices.data()), "enumerating devices");
  devices.resize(n);
  return devices;
}

uint64_t Instance::validation_messages() { return g_validation_messages.load(); }

}  // namespace vkattn::vk

// Enumerating devices and choosing one by the user's selector.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "vk/caps_query.hpp"
#include "vk/instance.hpp"
#include "vkattn/context.hpp"
#include "vkattn/error.hpp"

namespace vkattn {

std::vector<DeviceInfo> list_devices() {
  vk::Instance instance(false);
  std::vector<DeviceInfo> out;
  auto pds = instance.physical_devices();
  for (uint32_t i = 0; i < pds.size(); ++i) out.push_back({i, vk::query_caps(instance.handle(), pds[i])});
  return out;
}

namespace {

int type_rank(const std::string& type) {
  if (type == "discrete") return 0;
  if (type == "integrated") return 1;
  if (type == "virtual") return 2;
  if (type == "cpu") return 3;
  return 4;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string device_list(const std::vector<DeviceInfo>& devices) {
  std::string s;
  for (auto& d : devices) s += fmt::format("{}{}: {} ({})", s.empty() ? "" : ", ", d.index, d.caps.name, d.caps.type);
  return s.empty() ? "none" : s;
}

}  // namespace

uint32_t choose_device(const std::vector<DeviceInfo>& devices, const std::string& selector_in) {
  if (devices.empty())
    throw Error(ErrorKind::no_device,
                "device: expected at least one Vulkan device, got none; install mesa-vulkan-drivers (the CPU device, "
                "lavapipe) or your GPU's Vulkan driver");
  const std::string selector = lower(selector_in.empty() ? "auto" : selector_in);
  auto best_of = [&](auto&& accept) -> int {
    int best = -1;
    for (auto& d : devices)
      if (accept(d) && (best < 0 || type_rank(d.caps.type) < type_rank(devices[best].caps.type)))
        best = static_cast<int>(&d - devices.data());
    return best;
  };
  int found = -1;
  if (selector == "auto") {
    found = best_of([](const DeviceInfo&) { return true; });
  } else if (selector == "cpu") {
    found = best_of([](const DeviceInfo& d) { return d.caps.type == "cpu"; });
  } else if (selector == "gpu") {
    found = best_of([](const DeviceInfo& d) { return d.caps.type != "cpu"; });
  } else {
    uint32_t index = 0;
    auto [ptr, ec] = std::from_chars(selector.data(), selector.data() + selector.size(), index);
    if (ec == std::errc() && ptr == selector.data() + selector.size()) {
      if (index >= devices.size())
        throw Error(ErrorKind::invalid_argument,
                    fmt::format("device: expected an index below {}, got {} (devices: {})", devices.size(), index,
                                device_list(devices)));
      return index;
    }
    found = best_of([&](const DeviceInfo& d) { return lower(d.caps.name).find(selector) != std::string::npos; });
  }
  if (found < 0)
    throw Error(ErrorKind::invalid_argument,
                fmt::format("device: expected auto, cpu, gpu, an index or a name substring matching one of [{}], "
                            "got '{}'",
                            device_list(devices), selector_in));
  return devices[found].index;
}

}  // namespace vkattn

// `vkattn devices [--json]`: every Vulkan device and its capabilities.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "vkattn/context.hpp"
#include "vkattn/error.hpp"

namespace vkattn::cli {

namespace {

// The accumulator layout the tensor-core rows need is only known from a
// context on the device (its probe dispatch), so a device with cooperative
// matrices gets one: the listing and a caps file made from it then plan as
// the device itself would.
void probe_fragment_layouts(std::vector<DeviceInfo>& devices) {
  for (auto& d : devices) {
    if (!d.caps.cooperative_matrix_nv) continue;
    ContextOptions o;
    o.device = std::to_string(d.index);
    try {
      d.caps.coop_accumulator_quad = Context(o).caps().coop_accumulator_quad;
    } catch (const Error& e) {  // listed all the same, without the tensor-core rows
      fmt::print(stderr, "device {}: the accumulator layout could not be checked ({})\n", d.index, e.what());
    }
  }
}

void print_caps(const DeviceInfo& d) {
  const DeviceCaps& c = d.caps;
  fmt::print("device {}: {} ({}, {})\n", d.index, c.name, c.type, c.vendor);
  fmt::print("  driver: {} {} | Vulkan {}.{}.{}\n", c.driver_name, c.driver_info, VK_API_VERSION_MAJOR(c.api_version),
             VK_API_VERSION_MINOR(c.api_version), VK_API_VERSION_PATCH(c.api_version));
  fmt::print("  subgroups: size {} (min {}, max {}), basic {}, arithmetic {}, shuffle {}, ballot {}, size control {}\n",
             c.subgroup_size, c.min_subgroup_size, c.max_subgroup_size, c.subgroup_basic, c.subgroup_arithmetic,
             c.subgroup_shuffle, c.subgroup_ballot, c.subgroup_size_control);
  fmt::print("  arithmetic/storage: f16 {}, int8 {}, int16 {}, 16-bit storage {}, 8-bit storage {}\n",
             c.shader_float16, c.shader_int8, c.shader_int16, c.storage_16bit, c.storage_8bit);
  fmt::print("  limits: shared memory {} B, workgroup {} invocations, storage buffer range {} B, allocation {} B\n",
             c.max_shared_memory_bytes, c.max_workgroup_invocations, c.max_storage_buffer_range,
             c.max_allocation_bytes);
  fmt::print("  device-local memory {:.1f} GiB, compute units {}, timestamps {}, pipeline statistics {}\n",
             c.device_local_bytes / double(1 << 30), c.compute_units ? fmt::to_string(c.compute_units) : "unknown",
             c.timestamps, c.pipeline_executable_info);
  if (c.cooperative_matrix_shapes.empty()) {
    fmt::print("  cooperative matrix (NV): none\n");
  } else {
    fmt::print("  cooperative matrix (NV) shapes (accumulator laid out as mma.m16n8k16's: {}):\n",
               c.coop_accumulator_quad);
    for (const auto& s : c.cooperative_matrix_shapes)
      fmt::print("    {}x{}x{}  A/B {}/{}  C/D {}/{}\n", s.m, s.n, s.k, s.a_type, s.b_type, s.c_type, s.result_type);
  }
  if (c.cooperative_matrix2_nv)
    fmt::print("  cooperative matrix 2 (NV): workgroup scope up to {} invocations\n", c.cooperative_matrix2_max_workgroup);
  else
    fmt::print("  cooperative matrix 2 (NV): none\n");
}

}  // namespace

void add_devices_command(CLI::App& app, GlobalOptions& g, int& status) {
  auto* cmd = app.add_subcommand(
      "devices", "List every Vulkan device and its capabilities (with --device: the one it picks)");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "Print JSON on one line (the caps-file format `vkattn plan --caps` reads)");
  cmd->callback([json, &g, &status] {
    auto devices = list_devices();
    if (!g.device.empty()) devices = {devices.at(choose_device(devices, g.device))};
    probe_fragment_layouts(devices);
    if (*json) {
      nlohmann::json arr = nlohmann::json::array();
      for (const auto& d : devices) {
        auto j = nlohmann::json::parse(caps_to_json(d.caps));
        j["index"] = d.index;
        arr.push_back(j);
      }
      fmt::print("{}\n", arr.dump());
    } else {
      if (devices.empty()) fmt::print("no Vulkan devices\n");
      for (const auto& d : devices) print_caps(d);
    }
    status = 0;
  });
}

}  // namespace vkattn::cli

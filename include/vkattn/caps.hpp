// Everything vkattn needs to know about a device, read once. The planner sees
// only this struct, so plans can be made for any device from a caps file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vkattn/export.hpp"

namespace vkattn {

// One shape VK_NV_cooperative_matrix reports (types as "f16", "f32", ...).
struct CoopMatrixShape {
  uint32_t m = 0, n = 0, k = 0;
  std::string a_type, b_type, c_type, result_type;
  bool operator==(const CoopMatrixShape&) const = default;
};

struct VKATTN_API DeviceCaps {
  std::string name;
  std::string type;     // discrete | integrated | virtual | cpu | other
  std::string vendor;   // nvidia | amd | intel | apple | arm | qualcomm | mesa | unknown
  uint32_t vendor_id = 0;
  uint32_t device_id = 0;
  std::string driver_name;
  std::string driver_info;
  uint32_t api_version = 0;

  // Subgroups (compute stage).
  uint32_t subgroup_size = 1;
  uint32_t min_subgroup_size = 1;
  uint32_t max_subgroup_size = 1;
  bool subgroup_basic = false;
  bool subgroup_arithmetic = false;
  bool subgroup_shuffle = false;
  bool subgroup_ballot = false;
  bool subgroup_size_control = false;

  // Arithmetic and storage.
  bool shader_float16 = false;
  bool shader_int8 = false;
  bool shader_int16 = false;
  bool storage_16bit = false;
  bool storage_8bit = false;
  // bufferDeviceAddress (Vulkan 1.2): the text kernels read K/V pools larger
  // than max_storage_buffer_range through their device addresses.
  bool buffer_device_address = false;

  // Limits.
  uint32_t max_shared_memory_bytes = 16384;
  uint32_t max_workgroup_invocations = 128;
  uint32_t max_workgroup_size[3] = {128, 128, 64};
  uint32_t max_workgroup_count[3] = {65535, 65535, 65535};
  uint64_t max_storage_buffer_range = 1ull << 27;
  uint32_t min_storage_buffer_offset_alignment = 256;  // the largest the spec allows
  uint64_t max_allocation_bytes = 1ull << 30;
  uint64_t device_local_bytes = 0;
  uint32_t max_push_constants_bytes = 128;
  uint32_t compute_units = 0;  // 0 = unknown; used to size split-KV grids
  float timestamp_period_ns = 1.0f;
  bool timestamps = false;

  // VK_KHR_pipeline_executable_properties with pipelineExecutableInfo: the
  // driver reports its statistics of each pipeline (registers, shared memory,
  // spills on NVIDIA), read with ContextOptions::pipeline_statistics.
  bool pipeline_executable_info = false;

  // Tensor cores.
  bool cooperative_matrix_nv = false;
  // The 16x16 f32 accumulator, and the 16x8 one where the device has that
  // shape, are laid out as mma.m16n8k16's (each row held by the 4 invocations
  // of a quad), which the tensor-core rows assume. The extension does not fix
  // the layout, so a context checks it on its device (flash_layout_probe.comp,
  // stream_layout_probe.comp), as `vkattn devices` does for its listing and
  // caps files; caps read from the physical device alone (list_devices) say false.
  bool coop_accumulator_quad = false;
  std::vector<CoopMatrixShape> cooperative_matrix_shapes;
  // VK_NV_cooperative_matrix2 (on VK_KHR_cooperative_matrix) with workgroup
  // scope, flexible dimensions, reductions, conversions, element operations
  // and tensor addressing, and the Vulkan memory model its shaders declare:
  // the prefill_flash_coopmat2 rows (flash_workgroup.comp).
  bool cooperative_matrix2_nv = false;
  uint32_t cooperative_matrix2_max_workgroup = 0;  // invocations of a workgroup-scope matrix's workgroup

  bool operator==(const DeviceCaps&) const = default;
  bool has_coop_shape(uint32_t m, uint32_t n, uint32_t k, const std::string& ab, const std::string& c) const;
};

// JSON round trip for `vkattn devices --json` and `vkattn plan --caps FILE`.
VKATTN_API std::string caps_to_json(const DeviceCaps& caps, int indent = 2);
VKATTN_API DeviceCaps caps_from_json(const std::string& json_text);  // throws Error naming the field
// A caps file: one caps object, or the array `vkattn devices --json` prints
// (the element whose "index" equals `index`, or the first when index < 0).
VKATTN_API DeviceCaps load_caps_file(const std::string& path, int index = -1);

}  // namespace vkattn

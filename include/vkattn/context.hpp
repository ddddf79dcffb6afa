// The entry point: a Vulkan device vkattn runs on, its own or the caller's.
#pragma once

#include <vulkan/vulkan.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "vkattn/caps.hpp"
#include "vkattn/export.hpp"
#include "vkattn/tensor.hpp"

namespace vkattn {

namespace vk {
class Runtime;
}

struct ContextOptions {
  // auto | cpu | gpu | <index> | <name substring>; empty: $VKATTN_DEVICE, else auto.
  std::string device;
  // Enable the Khronos validation layer; unset: $VKATTN_VALIDATION=1 enables it.
  int validation = -1;
  // How long a wait for submitted work may take before the device is treated
  // as hung: the call throws Error(device_lost) instead of waiting forever.
  uint32_t fence_timeout_ms = 120000;
  // > 0: treat storage-buffer bindings as at most this many bytes (below the
  // device's limit), so K/V pools past one binding are exercised on any
  // device; 0: $VKATTN_MAX_STORAGE_BUFFER_RANGE, else the device's limit.
  uint64_t storage_buffer_range_limit = 0;
  // Keep the driver's statistics of every pipeline created (register count,
  // shared memory, spills: VK_KHR_pipeline_executable_properties), where the
  // device offers it (DeviceCaps::pipeline_executable_info); `vkattn bench
  // --pipeline-stats` prints them. Unset: $VKATTN_PIPELINE_STATS=1 turns it on.
  int pipeline_statistics = -1;
};

// A device created by the caller. vkattn uses it without owning it; the
// feature flags say which optional features the caller enabled at creation.
struct ExternalDevice {
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical_device = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t queue_family = 0;
  bool shader_float16_enabled = false;
  bool storage_16bit_enabled = false;
  bool storage_8bit_enabled = false;
  bool shader_int8_enabled = false;
  bool subgroup_size_control_enabled = false;
  bool cooperative_matrix_nv_enabled = false;
  // VK_KHR_cooperative_matrix and VK_NV_cooperative_matrix2 enabled with the
  // features DeviceCaps::cooperative_matrix2_nv lists, and vulkanMemoryModel
  // with its device scope.
  bool cooperative_matrix2_nv_enabled = false;
  // bufferDeviceAddress enabled: K/V pools past one storage-buffer binding,
  // whose buffers the host created with VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT.
  bool buffer_device_address_enabled = false;
  // pipelineExecutableInfo (VK_KHR_pipeline_executable_properties) enabled:
  // with $VKATTN_PIPELINE_STATS=1, pipelines keep the driver's statistics.
  bool pipeline_executable_info_enabled = false;
  // The host's Vulkan loader (MoltenVK, Android, an engine's own): vkattn
  // resolves every entry point through it instead of opening libvulkan.so.1.
  // Instance-level entry points are process-wide, so the first context
  // decides the loader and later ones must use the same; device-level ones
  // each context resolves for its own device. Null: libvulkan.so.1.
  PFN_vkGetInstanceProcAddr get_instance_proc_addr = nullptr;
  // When other threads of the host use `queue` too: vkattn calls lock_queue()
  // before and unlock_queue() after each vkQueueSubmit, which happens only in
  // Recorder::submit()/run() and in Context::upload()/download() (and the
  // first call that needs vkattn's zeroed placeholder buffer). Set both or
  // neither. A host that records into its own command buffer
  // (Recorder(ctx, cb)) and submits it itself needs no lock for attention work.
  std::function<void()> lock_queue;
  std::function<void()> unlock_queue;
};

struct DeviceInfo {
  uint32_t index = 0;
  DeviceCaps caps;
};

// Every Vulkan device the loader reports, with its capabilities.
VKATTN_API std::vector<DeviceInfo> list_devices();

// Picks a device index from `selector` (see ContextOptions::device); pure, so
// it is tested without a GPU. Throws Error naming "device" when nothing matches.
VKATTN_API uint32_t choose_device(const std::vector<DeviceInfo>& devices, const std::string& selector);

// Threads: a Context may be used from several threads at once: tensors,
// wraps, uploads and downloads, and recording, provided each thread records
// with its own Recorder (a Recorder is used by one thread at a time).
// Separate contexts (one per GPU, say) are independent of each other.
class VKATTN_API Context {
 public:
  // On a device with cooperative matrices either constructor runs one small
  // dispatch (on the context's queue; the host's for an ExternalDevice) that
  // checks their accumulator layout (DeviceCaps::coop_accumulator_quad).
  explicit Context(const ContextOptions& options = {});
  explicit Context(const ExternalDevice& external);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const DeviceCaps& caps() const;

  // A new device buffer for `shape` elements of `dtype`.
  Tensor tensor(DType dtype, Shape shape);
  // A caller's buffer range seen as a tensor; vkattn never frees it.
  Tensor wrap(VkBuffer buffer, VkDeviceSize offset, VkDeviceSize bytes, DType dtype, Shape shape);

  // Blocking copies between host memory and a tensor (exact byte counts).
  void upload(const Tensor& dst, std::span<const std::byte> bytes);
  void download(const Tensor& src, std::span<std::byte> bytes);
  template <class T>
  void upload(const Tensor& dst, const std::vector<T>& values) {
    upload(dst, std::as_bytes(std::span<const T>(values)));
  }
  template <class T>
  std::vector<T> download_as(const Tensor& src) {
    std::vector<T> out(src.bytes() / sizeof(T));
    download(src, std::as_writable_bytes(std::span<T>(out)));
    return out;
  }

  // Number of messages the validation layer reported so far (0 when off).
  static uint64_t validation_messages();

  vk::Runtime& runtime();

 private:
  std::unique_ptr<vk::Runtime> runtime_;
};

}  // namespace vkattn

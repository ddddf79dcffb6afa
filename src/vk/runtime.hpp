// The Vulkan objects behind a Context: instance, device, queue, memory,
// pipelines. Owned by vkattn, or borrowed from a caller (ExternalDevice).
#pragma once

#include <vulkan/vulkan.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>

#include "vk/allocation.hpp"
#include "vk/pipeline_cache.hpp"
#include "vkattn/caps.hpp"
#include "vkattn/context.hpp"

struct VolkDeviceTable;

namespace vkattn::vk {

class Instance;

class Runtime {
 public:
  explicit Runtime(const ContextOptions& options);
  explicit Runtime(const ExternalDevice& external);
  ~Runtime();

  const DeviceCaps& caps() const { return caps_; }
  // What the fragment-layout probe found (DeviceCaps::coop_accumulator_quad).
  void set_coop_accumulator_quad(bool holds) { caps_.coop_accumulator_quad = holds; }
  // Unique in the process and never reused, so per-device caches (plans,
  // pipelines behind them) can key on it without outliving the device.
  uint64_t id() const { return id_; }
  VkDevice device() const { return device_; }
  // The device-level functions of this context's device (vk/volk.hpp).
  const VolkDeviceTable& vk() const { return *vk_; }
  VkPhysicalDevice physical_device() const { return physical_; }
  VkQueue queue() const { return queue_; }
  uint32_t queue_family() const { return queue_family_; }

  // Device health. After device loss (reported by the driver, injected, or a
  // fence wait past its timeout) every call fails fast with device_lost.
  bool lost() const { return lost_; }
  void require_alive() const;
  // vk::check that also records device loss.
  void check(VkResult r, std::string_view doing);
  // Submits to the queue (the fault-injection site "submit"), holding vkattn's
  // queue mutex and, for a borrowed queue, the host's lock (ExternalDevice::lock_queue).
  void submit(const VkSubmitInfo& info, VkFence fence, std::string_view doing);
  // Waits for `fence` at most the context's fence timeout, then resets it.
  void wait_fence(VkFence fence, std::string_view doing);
  PipelineCache& pipelines() { return *pipelines_; }

  std::shared_ptr<Allocation> allocate(VkDeviceSize bytes, bool host_visible);
  // Device scratch reused across calls: recorders take it and give it back on reset.
  std::shared_ptr<Allocation> acquire_scratch(VkDeviceSize bytes);
  void release_scratch(std::shared_ptr<Allocation> a);
  // Device words that start zeroed and that every kernel using them leaves
  // zeroed (the split arrival counters of text_split_combine.glsl), so no
  // recording has to clear them on each replay: recorders take them and give
  // them back on reset, still zero.
  std::shared_ptr<Allocation> acquire_zeroed(VkDeviceSize bytes);
  void release_zeroed(std::shared_ptr<Allocation> a);
  // A small zeroed buffer bound where a kernel's optional input is absent.
  VkBuffer placeholder_buffer();
  // The device address of a buffer (needs caps().buffer_device_address).
  VkDeviceAddress device_address(VkBuffer buffer) const;
  void upload(VkBuffer dst, VkDeviceSize offset, std::span<const std::byte> bytes);
  void download(VkBuffer src, VkDeviceSize offset, std::span<std::byte> bytes);
  // Runs a one-off command buffer to completion (transfers, tests); the caller
  // holds transfer_mutex_ (the command pool and fence are shared).
  template <class F>
  void run_once(F&& record) {
    VkCommandBuffer cb = begin_one_shot();
    record(cb);
    end_one_shot(cb);
  }

 private:
  void load_device_functions();
  static uint64_t next_id() {
    static std::atomic<uint64_t> last{0};
    return ++last;
  }
  const uint64_t id_ = next_id();
  // `pipeline_statistics`: pipelines keep the driver's statistics where the device offers them.
  void finish_setup(bool pipeline_statistics);
  // Lowers caps_.max_storage_buffer_range to `limit` bytes (0: to
  // $VKATTN_MAX_STORAGE_BUFFER_RANGE when set), so pools past one binding can
  // be tested on any device.
  void limit_storage_buffer_range(uint64_t limit);
  VkCommandBuffer begin_one_shot();
  void end_one_shot(VkCommandBuffer cb);
  Allocation& staging(VkDeviceSize bytes);

  std::shared_ptr<Instance> instance_;  // null when borrowed
  bool owns_device_ = false;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  std::unique_ptr<VolkDeviceTable> vk_;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t queue_family_ = 0;
  DeviceCaps caps_;
  VkPhysicalDeviceMemoryProperties memory_props_{};
  VkCommandPool command_pool_ = VK_NULL_HANDLE;
  VkFence one_shot_fence_ = VK_NULL_HANDLE;
  std::mutex queue_mutex_;
  std::function<void()> lock_queue_, unlock_queue_;  // the host's, for a borrowed queue
  // One-off transfers share the staging buffer, command pool and fence.
  std::mutex transfer_mutex_;
  std::once_flag placeholder_once_;
  std::shared_ptr<Allocation> staging_;  // grown on demand, reused across copies
  std::unique_ptr<PipelineCache> pipelines_;
  std::mutex scratch_mutex_;
  using Pool = std::multimap<VkDeviceSize, std::shared_ptr<Allocation>>;
  std::shared_ptr<Allocation> take_pooled(Pool& pool, VkDeviceSize bytes);
  void give_pooled(Pool& pool, std::shared_ptr<Allocation> a);
  Pool free_scratch_;
  Pool free_zeroed_;
  std::shared_ptr<Allocation> placeholder_;
  std::atomic<bool> lost_{false};
  uint64_t fence_timeout_ns_ = 120'000'000'000ull;
};

}  // namespace vkattn::vk

// Records dispatches with the barriers between them. Ops talk to this class;
// users see the thin vkattn::Recorder.
#pragma once

#include <vulkan/vulkan.h>

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "vk/allocation.hpp"
#include "vk/hazard_tracker.hpp"
#include "vk/pipeline_cache.hpp"
#include "vkattn/tensor.hpp"

namespace vkattn {
class Context;
}

namespace vkattn::vk {

class Runtime;

struct BufferRef {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;
  VkDeviceSize range = 0;
  Access access = Access::read;
  // vkattn's memory behind the buffer, held by the recorder until reset() so a
  // tensor dropped after recording stays valid for the recorded commands.
  std::shared_ptr<Allocation> keep;
  // Read through its device address, not a binding (it may pass the binding
  // range): ordered like the others, its binding gets the placeholder.
  bool by_address = false;
};

inline BufferRef ref(const Tensor& t, Access a) { return {t.buffer(), t.offset(), t.bytes(), a, t.allocation()}; }

class RecorderImpl {
 public:
  RecorderImpl(Context& ctx, VkCommandBuffer external);
  ~RecorderImpl();

  Context& context() { return ctx_; }
  // Binds buffers 0..N-1 (set 0) and push constants, then dispatches.
  void dispatch(const Pipeline& p, std::span<const BufferRef> buffers, std::span<const std::byte> push,
                uint32_t gx, uint32_t gy, uint32_t gz);
  // The same with workgroup counts read from `args` (3 x u32) on the GPU.
  void dispatch_indirect(const Pipeline& p, std::span<const BufferRef> buffers, std::span<const std::byte> push,
                         const BufferRef& args);
  // Fills a range with a u32 value (a transfer, ordered like a dispatch).
  void fill(const BufferRef& dst, uint32_t value);

  // Device scratch that lives until reset() (reused across recordings).
  BufferRef scratch(VkDeviceSize bytes);
  // Device scratch that is zero when handed out and that the recorded
  // commands must leave zero at the end of every replay (Runtime::acquire_zeroed).
  BufferRef zeroed_scratch(VkDeviceSize bytes);
  // Writes small host data into a buffer from the command buffer itself
  // (vkCmdUpdateBuffer: no host round trip, at most 65536 bytes).
  void update(const BufferRef& dst, std::span<const std::byte> bytes);

  uint32_t timestamp();
  // Every later command waits for everything recorded before it.
  void barrier() { hazards_.order_everything(); }
  void submit();
  void wait();
  double elapsed_ms(uint32_t from, uint32_t to);
  void reset();
  uint32_t dispatch_count() const { return dispatches_; }
  // Scratch ranges handed out since the last reset (each one written by a recorded command).
  size_t scratch_count() const { return scratch_.size(); }
  // The pipelines bound since the last reset, each once, in order of first
  // use (the bench reports their statistics); the runtime's cache owns them.
  const std::vector<const Pipeline*>& bound_pipelines() const { return bound_; }

 private:
  void ensure_recording();
  void release_zeroed();
  // Inserts a barrier when `buffers` (used by `consumer`) or `indirect_args`
  // (fetched as a dispatch's workgroup counts) touch memory an earlier
  // command wrote, or write memory an earlier command still reads; its
  // destination covers only the consumers that need it.
  void order_against(std::span<const BufferRef> buffers, Consumer consumer, const BufferRef* indirect_args = nullptr);
  VkDescriptorSet allocate_set(const Pipeline& p);
  void bind(const Pipeline& p, std::span<const BufferRef> buffers, std::span<const std::byte> push);

  Context& ctx_;
  Runtime& rt_;
  VkCommandPool command_pool_ = VK_NULL_HANDLE;  // own command buffer only
  VkCommandBuffer cb_ = VK_NULL_HANDLE;
  bool external_ = false;
  bool recording_ = false;
  bool ended_ = false;
  bool submitted_ = false;
  VkFence fence_ = VK_NULL_HANDLE;
  std::vector<VkDescriptorPool> pools_;
  uint32_t sets_in_last_pool_ = 0;
  VkQueryPool queries_ = VK_NULL_HANDLE;
  uint32_t next_query_ = 0;
  bool queries_reset_ = false;
  HazardTracker hazards_;
  std::vector<std::shared_ptr<Allocation>> scratch_;
  std::vector<std::shared_ptr<Allocation>> zeroed_;
  std::vector<std::shared_ptr<Allocation>> retained_;
  std::vector<BufferUse> uses_;  // order_against's scratch
  uint32_t dispatches_ = 0;
  std::vector<const Pipeline*> bound_;
};

}  // namespace vkattn::vk

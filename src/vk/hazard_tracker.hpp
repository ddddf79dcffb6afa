// Which barrier a recorded command needs: the hazards between the buffers it
// touches and those earlier commands touched, per consumer of the memory.
// Kept apart from the command buffer so the rules are unit-tested without a device.
#pragma once

#include <vulkan/vulkan.h>

#include <array>
#include <cstdint>
#include <set>
#include <span>

namespace vkattn::vk {

enum class Access : uint8_t { read, write, read_write };

// Who reads or writes a buffer a command touches: a shader, a transfer
// command (fill, update), or the fetch of a dispatch's indirect arguments.
// A barrier waits only for the consumers the command brings: on NVIDIA a
// barrier whose destination includes the indirect fetch makes every dispatch
// behind it about 1.6 us slower (H100, driver 580: the dispatch floor 5.2 ->
// 3.6 us without it, as without any barrier).
enum class Consumer : uint8_t { shader, transfer, indirect_fetch };
constexpr size_t kConsumers = 3;
using ConsumerMask = uint32_t;  // bit (1 << Consumer)
constexpr ConsumerMask consumer_bit(Consumer c) { return ConsumerMask(1) << static_cast<unsigned>(c); }
constexpr ConsumerMask kEveryConsumer = (ConsumerMask(1) << kConsumers) - 1;

struct BufferUse {
  VkBuffer buffer = VK_NULL_HANDLE;
  Access access = Access::read;
  Consumer consumer = Consumer::shader;
};

class HazardTracker {
 public:
  // The consumers a barrier before a command with `uses` must order earlier
  // work for (0: none needed): a use that reads or writes what an earlier
  // command wrote, or writes what one read, since the last barrier that
  // covered its consumer.
  ConsumerMask needed(std::span<const BufferUse> uses) const;
  // Whether the barrier covering `consumers` must also wait for the caller's
  // work before the recording (host writes, any stage), which nothing here
  // tracks: true for each consumer's first barrier in a recording.
  bool waits_for_caller(ConsumerMask consumers) const { return (consumers & caller_unordered_) != 0; }
  // A barrier covering `consumers` was recorded.
  void barrier_recorded(ConsumerMask consumers);
  // A command with `uses` was recorded after any barrier it needed.
  void recorded(std::span<const BufferUse> uses);
  // Every later command waits for everything recorded so far, whatever it
  // touches (Recorder::barrier()).
  void order_everything();
  // A new recording: every later command also waits for the caller's work.
  void begin_recording();

 private:
  struct Unordered {
    std::set<VkBuffer> written, read;
    bool everything = true;  // all earlier work, whatever it touched
  };
  std::array<Unordered, kConsumers> unordered_;
  ConsumerMask caller_unordered_ = kEveryConsumer;  // consumers no barrier has yet ordered after the caller's work
};

}  // namespace vkattn::vk

#include "vk/hazard_tracker.hpp"

namespace vkattn::vk {

ConsumerMask HazardTracker::needed(std::span<const BufferUse> uses) const {
  ConsumerMask mask = 0;
  for (const BufferUse& u : uses) {
    const Unordered& since = unordered_[static_cast<size_t>(u.consumer)];
    const bool writes = u.access != Access::read;
    if (since.everything || since.written.count(u.buffer) || (writes && since.read.count(u.buffer)))
      mask |= consumer_bit(u.consumer);
  }
  return mask;
}

void HazardTracker::barrier_recorded(ConsumerMask consumers) {
  for (size_t c = 0; c < kConsumers; ++c)
    if (consumers & consumer_bit(static_cast<Consumer>(c))) unordered_[c] = Unordered{{}, {}, false};
  caller_unordered_ &= ~consumers;
}

void HazardTracker::recorded(std::span<const BufferUse> uses) {
  // Until a barrier covers a consumer, this command's writes and reads are
  // unordered against that consumer's later uses, whichever consumer made them.
  for (Unordered& since : unordered_) {
    if (since.everything) continue;
    for (const BufferUse& u : uses) {
      if (u.access != Access::read) since.written.insert(u.buffer);
      if (u.access != Access::write) since.read.insert(u.buffer);
    }
  }
}

void HazardTracker::order_everything() {
  for (Unordered& since : unordered_) since = Unordered{};
}

void HazardTracker::begin_recording() {
  order_everything();
  caller_unordered_ = kEveryConsumer;
}

}  // namespace vkattn::vk

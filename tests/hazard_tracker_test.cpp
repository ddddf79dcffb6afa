// The recorder's barrier rules: which consumers a command's barrier covers.
#include <gtest/gtest.h>

#include <vector>

#include "vk/hazard_tracker.hpp"

namespace vkattn::vk {
namespace {

// Distinct fake handles: the tracker only compares them.
VkBuffer buffer(uintptr_t n) { return reinterpret_cast<VkBuffer>(n); }

constexpr ConsumerMask kShader = consumer_bit(Consumer::shader);
constexpr ConsumerMask kTransfer = consumer_bit(Consumer::transfer);
constexpr ConsumerMask kIndirect = consumer_bit(Consumer::indirect_fetch);

// A tracker past its recording's first barrier, which covers everything.
HazardTracker started() {
  HazardTracker t;
  t.barrier_recorded(kEveryConsumer);
  return t;
}

// Records a command (after the barrier it needs) and returns that barrier's consumers.
ConsumerMask record(HazardTracker& t, std::vector<BufferUse> uses) {
  const ConsumerMask needed = t.needed(uses);
  if (needed) t.barrier_recorded(needed);
  t.recorded(uses);
  return needed;
}

TEST(HazardTracker, ANewRecordingOrdersEveryConsumer) {
  HazardTracker t;
  EXPECT_EQ(t.needed(std::vector<BufferUse>{{buffer(1), Access::read, Consumer::shader}}), kShader);
  EXPECT_EQ(t.needed(std::vector<BufferUse>{{buffer(1), Access::write, Consumer::transfer}}), kTransfer);
}

TEST(HazardTracker, UnrelatedDispatchesNeedNoBarrier) {
  HazardTracker t = started();
  EXPECT_EQ(record(t, {{buffer(1), Access::read, Consumer::shader}, {buffer(2), Access::write, Consumer::shader}}), 0u);
  EXPECT_EQ(record(t, {{buffer(1), Access::read, Consumer::shader}, {buffer(3), Access::write, Consumer::shader}}), 0u);
}

TEST(HazardTracker, ReadAfterWriteOrdersOnlyTheReadersConsumer) {
  HazardTracker t = started();
  record(t, {{buffer(1), Access::write, Consumer::shader}});
  EXPECT_EQ(record(t, {{buffer(1), Access::read, Consumer::shader}}), kShader);
  // That barrier covered shaders only: a transfer write of the same buffer still waits.
  EXPECT_EQ(record(t, {{buffer(1), Access::write, Consumer::transfer}}), kTransfer);
}

TEST(HazardTracker, WriteAfterReadAndWriteAfterWriteWait) {
  HazardTracker t = started();
  record(t, {{buffer(1), Access::read, Consumer::shader}});
  EXPECT_EQ(record(t, {{buffer(1), Access::write, Consumer::shader}}), kShader);
  EXPECT_EQ(record(t, {{buffer(1), Access::write, Consumer::shader}}), kShader);
}

// A dispatch whose workgroup counts an earlier dispatch wrote needs the
// indirect fetch ordered, even after a shader-only barrier came between them.
TEST(HazardTracker, IndirectArgumentsWaitForTheirWriter) {
  HazardTracker t = started();
  record(t, {{buffer(9), Access::write, Consumer::shader}});               // writes the counts
  EXPECT_EQ(record(t, {{buffer(9), Access::read, Consumer::shader}}), kShader);  // shader-only barrier
  EXPECT_EQ(record(t, {{buffer(2), Access::write, Consumer::shader}, {buffer(9), Access::read, Consumer::indirect_fetch}}),
            kIndirect);
  // Once fetched in order, another indirect dispatch on the same counts needs nothing.
  EXPECT_EQ(record(t, {{buffer(3), Access::write, Consumer::shader}, {buffer(9), Access::read, Consumer::indirect_fetch}}),
            0u);
}

TEST(HazardTracker, OrderEverythingOrdersEachConsumerOnce) {
  HazardTracker t = started();
  record(t, {{buffer(1), Access::write, Consumer::shader}});
  t.order_everything();
  EXPECT_EQ(record(t, {{buffer(5), Access::read, Consumer::shader}}), kShader);
  EXPECT_EQ(record(t, {{buffer(6), Access::read, Consumer::shader}}), 0u);
  EXPECT_EQ(record(t, {{buffer(7), Access::write, Consumer::transfer}}), kTransfer);
  EXPECT_EQ(record(t, {{buffer(8), Access::read, Consumer::indirect_fetch}}), kIndirect);
}

}  // namespace
}  // namespace vkattn::vk

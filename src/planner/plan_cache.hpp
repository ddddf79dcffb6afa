// Plans already made, per (device, family, shape bucket), so recording a call
// seen before does no planning, no string formatting and takes no lock.
//
// Each thread keeps its own table: a hit is a hash lookup in memory no other
// thread touches. Devices are told apart by vk::Runtime::id(), which is never
// reused, so an entry cannot outlive its device's pipelines and be mistaken
// for another's.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <vector>

#include "vkattn/plan.hpp"

namespace vkattn::vk {
struct Pipeline;
}

namespace vkattn::planner {

// The numbers of a call the plan depends on (a family fills what it needs,
// the rest stays 0), and the options it was asked with.
struct PlanKey {
  uint64_t device = 0;
  PlanFamily family = PlanFamily::text;
  std::array<uint32_t, 16> shape{};
  PlanOptions options;
  bool operator==(const PlanKey&) const = default;
};

// The key of a call of `family` on device `device` whose plan depends on the
// numbers `shape` (at most 16) and on `options`.
PlanKey plan_key(uint64_t device, PlanFamily family, std::initializer_list<uint32_t> shape, const PlanOptions& options);

// A plan and the pipelines of its dispatches (owned by the device's pipeline cache).
struct CachedPlan {
  Plan plan;
  std::vector<const vk::Pipeline*> pipelines;
};

// The cached plan for `key` on this thread, or nullptr.
const CachedPlan* find_plan(const PlanKey& key);
const CachedPlan& remember_plan(const PlanKey& key, CachedPlan entry);
// Plans this thread has remembered (each one a miss that planned), for tests.
uint64_t plans_made_on_this_thread();
// Makes every thread's table stale (the tuning cache changed); each clears on its next lookup.
void invalidate_plans();

}  // namespace vkattn::planner

#include "planner/plan_cache.hpp"

#include <algorithm>
#include <atomic>
#include <functional>
#include <string_view>
#include <unordered_map>

namespace vkattn::planner {

namespace {

struct KeyHash {
  size_t operator()(const PlanKey& k) const {
    uint64_t h = k.device * 0x9e3779b97f4a7c15ull ^ uint64_t(k.family);
    auto mix = [&h](uint64_t v) { h = (h ^ v) * 0x100000001b3ull; };
    for (uint32_t v : k.shape) mix(v);
    const PlanOptions& o = k.options;
    mix(std::hash<std::string_view>{}(o.variant));
    mix(o.path.size());
    mix(o.layer);
    mix(o.splits);
    mix(o.tile_keys);
    mix(o.rows);
    mix(uint64_t(o.strict) | uint64_t(o.allow_reduced_precision) << 1 | uint64_t(o.use_tuning_cache) << 2);
    return size_t(h);
  }
};

// A runtime that plans every step with a new host length would grow the table
// without end; past this many entries it starts over.
constexpr size_t kMaxEntries = 4096;

std::atomic<uint64_t> g_generation{0};

struct ThreadTable {
  uint64_t generation = 0;
  uint64_t remembered = 0;
  std::unordered_map<PlanKey, CachedPlan, KeyHash> plans;
  void refresh() {
    const uint64_t now = g_generation.load(std::memory_order_relaxed);
    if (now != generation) {
      plans.clear();
      generation = now;
    }
  }
};

ThreadTable& table() {
  thread_local ThreadTable t;
  return t;
}

}  // namespace

PlanKey plan_key(uint64_t device, PlanFamily family, std::initializer_list<uint32_t> shape, const PlanOptions& options) {
  PlanKey k;
  k.device = device;
  k.family = family;
  std::copy_n(shape.begin(), std::min(shape.size(), k.shape.size()), k.shape.begin());
  k.options = options;
  return k;
}

const CachedPlan* find_plan(const PlanKey& key) {
  ThreadTable& t = table();
  t.refresh();
  const auto it = t.plans.find(key);
  return it == t.plans.end() ? nullptr : &it->second;
}

const CachedPlan& remember_plan(const PlanKey& key, CachedPlan entry) {
  ThreadTable& t = table();
  t.refresh();
  if (t.plans.size() >= kMaxEntries) t.plans.clear();
  ++t.remembered;
  return t.plans.insert_or_assign(key, std::move(entry)).first->second;
}

uint64_t plans_made_on_this_thread() { return table().remembered; }

void invalidate_plans() { g_generation.fetch_add(1, std::memory_order_relaxed); }

}  // namespace vkattn::planner

// `record(rec, plan, ...)` of every family: a plan handed in by the caller is
// checked by planning its variant (and its tuning values) for this call on
// this device, through the plan cache, so a plan for another shape, dtype or
// device, or one edited by hand, is an Error and never reaches the GPU; a
// recording loop pays the check once.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "planner/plan_cache.hpp"
#include "vk/runtime.hpp"
#include "vkattn/caps.hpp"
#include "vkattn/error.hpp"
#include "vkattn/plan.hpp"

namespace vkattn::ops {

// The first field in which `got` differs from `want`, for the Error.
std::string first_difference(const Plan& want, const Plan& got);

// `cached(options)` returns the family's CachedPlan for this call.
template <class CachedFor>
const planner::CachedPlan& checked_plan(const Plan& plan, PlanFamily family, const DeviceCaps& caps,
                                        CachedFor cached) {
  if (plan.family != family)
    throw Error(ErrorKind::invalid_argument,
                fmt::format("plan.family: expected {}, got {}", to_string(family), to_string(plan.family)));
  PlanOptions again;
  again.variant = plan.variant;
  again.strict = true;
  again.allow_reduced_precision = true;  // naming a variant is that permission
  again.use_tuning_cache = false;
  auto mismatch = [&](const Plan& want, const std::string& detail) {
    return Error(ErrorKind::invalid_argument, fmt::format("plan: expected this call's plan on '{}', got one whose {}{}",
                                                          caps.name, first_difference(want, plan), detail));
  };
  const planner::CachedPlan* c = nullptr;
  try {
    c = &cached(again);
  } catch (const Error& e) {
    throw Error(ErrorKind::invalid_argument, fmt::format("plan: variant '{}' cannot run this call on '{}' ({})",
                                                         plan.variant, caps.name, e.what()));
  }
  if (c->plan.same_work(plan)) return *c;
  // Tuning values the plan was made with (rows, splits, keys per step) are its to keep.
  const Plan untuned = c->plan;
  const auto rows = [](const PlanGeometry& g) { return std::max(1u, g.query_rows) * std::max(1u, g.head_group); };
  if (rows(plan.geometry) != rows(untuned.geometry)) again.rows = rows(plan.geometry);
  if (plan.geometry.splits != untuned.geometry.splits) again.splits = plan.geometry.splits;
  if (plan.geometry.tile_keys != untuned.geometry.tile_keys) again.tile_keys = plan.geometry.tile_keys;
  if (!again.rows && !again.splits && !again.tile_keys) throw mismatch(untuned, "");
  try {
    c = &cached(again);
  } catch (const Error& e) {
    throw mismatch(untuned, fmt::format(" ({})", e.what()));
  }
  if (!c->plan.same_work(plan)) throw mismatch(c->plan, "");
  return *c;
}

// record(rec, plan, ...) of a family, after its validation: the checked plan
// recorded by `record_checked(cached_plan)`, reporting the caller's reason and warnings.
template <class Info, class CachedFor, class RecordChecked>
Info record_from_plan(const Plan& plan, PlanFamily family, const DeviceCaps& caps, CachedFor cached,
                      RecordChecked record_checked) {
  Info info = record_checked(checked_plan(plan, family, caps, cached));
  info.reason = plan.reason;
  info.warnings = plan.warnings;
  return info;
}

// The plan cache's entry for `key`, or `plan()` with the pipelines of its
// dispatches (each built for `interface_of(dispatch)`) made now and remembered.
template <class PlanFn, class InterfaceOf>
const planner::CachedPlan& cached_or_planned(const planner::PlanKey& key, vk::Runtime& rt, PlanFn plan,
                                             InterfaceOf interface_of) {
  if (const planner::CachedPlan* hit = planner::find_plan(key)) return *hit;
  planner::CachedPlan entry{plan(), {}};
  for (const auto& d : entry.plan.dispatches)
    entry.pipelines.push_back(
        &rt.pipelines().get({d.module, d.spec_constants, d.required_subgroup_size}, interface_of(d)));
  return planner::remember_plan(key, std::move(entry));
}

}  // namespace vkattn::ops

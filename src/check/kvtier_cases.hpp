// Tiered (hot/cold) KV-cache cases, part of the "kvcache" check family.
#pragma once

#include <vector>

#include "check/check_case.hpp"
#include "check/text_cases.hpp"

namespace vkattn::check {

// A binding range at most this large was lowered on purpose: the pool cases then run on every engine.
constexpr uint64_t kLoweredBindingRange = 16ull << 20;

std::vector<TextCase> kvtier_check_grid(const DeviceCaps& caps, GridSize size);
std::vector<CheckCase> kvtier_check_cases(const DeviceCaps& caps, GridSize size);
std::vector<CheckCase> kvtier_demo_cases(DemoSize size);

}  // namespace vkattn::check

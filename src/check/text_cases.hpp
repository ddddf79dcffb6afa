// One case type for text attention, shared by the tests, `vkattn check`,
// `vkattn demo` and the benchmarks: build inputs, run on the GPU, compare with
// the float64 oracle, optionally time.
#pragma once

#include <string>
#include <vector>

#include "check/check_case.hpp"
#include "vkattn/context.hpp"
#include "vkattn/plan.hpp"
#include "vkattn/text.hpp"

namespace vkattn::check {

struct TextCase {
  std::string name;
  TextAttentionParams params;
  DType q = DType::f32, kv = DType::f32, out = DType::f32;
  std::string variant;          // forced with strict mode; empty: the planner decides
  float logit_scale = 1.0f;     // multiplies Q, to make softmax peaked or flat
  // K and V times 2^kv_log2_scale, and each V row (a head's D values) also
  // times 2^u, u drawn uniformly from [-v_log2_spread, v_log2_spread]:
  // magnitudes far outside f16's range, for the kernels that stage bf16 as
  // f16 (a K row's spread would give one key all the weight).
  float kv_log2_scale = 0.0f;
  float v_log2_spread = 0.0f;
  bool gpu_kv_len = false;      // per-sequence values from u32 GPU buffers
  bool gpu_start_pos = false;
  bool gpu_kv_start = false;
  bool indirect = false;        // workgroup counts from a GPU buffer
  bool scramble_pages = true;   // paged: pages in a shuffled order
  uint32_t seed = 1;
  // Benchmarks: > 0 records the call once with host hints of this many keys
  // and the real lengths in GPU buffers, then replays it (a decode graph
  // recorded early and replayed late); 0 records at the real lengths.
  uint32_t recorded_at = 0;
  uint32_t splits = 0;     // tuning overrides passed to the planner (0: its choice)
  uint32_t tile_keys = 0;
  uint32_t rows = 0;       // query rows per workgroup (0: the planner's choice)
};



CheckResult run_text_case(Context& ctx, const TextCase& c, const RunOptions& options = {});
// Gives a case a layout (for tiered: its cold tier's is `cold`), sized so the
// same keys stay visible.
void set_layout(TextCase& c, KvLayout layout);
void set_tiered(TextCase& c, KvLayout cold, uint32_t hot_window);
// What the case asks of the planner: its forced variant (strict) and tuning overrides.
PlanOptions plan_options(const TextCase& c);
// The parity grid: every text variant x dtype x layout x feature that the
// device can run, sized for lavapipe in CI (`ci`) or a GPU (`full`).
std::vector<TextCase> text_check_grid(const DeviceCaps& caps, GridSize size);

std::string describe(const TextCase& c);

}  // namespace vkattn::check

// Vision cases (attention and the position-embedding add) shared by the tests,
// `vkattn check --family vision`, `vkattn demo` and the benchmarks; plus the
// host-side helpers the vision and audio cases share.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <span>
#include <random>
#include <string>
#include <vector>

#include "check/check_case.hpp"
#include "check/host_tensor.hpp"
#include "vkattn/recorder.hpp"
#include "vkattn/vision.hpp"

namespace vkattn::check {

namespace host {

// Records one call (between timestamps when timed), runs it, then replays it
// for r.gpu_ms when options ask for timing.
void run_recorded(Context& ctx, const RunOptions& options, CheckResult& r, const std::function<void(Recorder&)>& call);
// Sets r.cmp and r.passed from the oracle, or passes when options skip it.
void judge(CheckResult& r, std::span<const float> got, const RunOptions& options,
           const std::function<std::vector<double>()>& oracle);
// Runs `body` on r; an exception becomes r.error and a failed result.
CheckResult guarded(CheckResult r, const std::function<void(CheckResult&)>& body);

// [A, B, D] -> [B, A, D] rows (PHD <-> HPD).
template <class T>
std::vector<T> swap_rows(const std::vector<T>& x, uint64_t a, uint64_t b, uint64_t d) {
  std::vector<T> y(x.size());
  for (uint64_t i = 0; i < a; ++i)
    for (uint64_t j = 0; j < b; ++j) std::copy_n(&x[(i * b + j) * d], d, &y[(j * a + i) * d]);
  return y;
}

}  // namespace host

struct VisionCase {
  std::string name;
  VisionAttentionParams params;
  DType dtype = DType::f32;  // Q, K, V
  DType out = DType::f32;
  std::string variant;       // forced with strict mode; empty: the planner decides
  float logit_scale = 1.0f;  // multiplies Q, to make softmax peaked or flat
  uint32_t seed = 1;
};
CheckResult run_vision_case(Context& ctx, const VisionCase& c, const RunOptions& options = {});

struct PosEmbedCase {
  std::string name;
  PosEmbedParams params;
  DType dtype = DType::f32;
  uint32_t seed = 1;
};
CheckResult run_posembed_case(Context& ctx, const PosEmbedCase& c, const RunOptions& options = {});

// Every vision variant x dtype the device can run on small patch counts (ci),
// or the model-sized 2304/4096/9216-patch grid for a GPU (full).
std::vector<VisionCase> vision_check_grid(const DeviceCaps& caps, GridSize size);
std::vector<PosEmbedCase> posembed_check_grid(GridSize size);
std::string describe(const VisionCase& c);

}  // namespace vkattn::check

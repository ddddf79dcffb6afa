// The currency of `vkattn check`, `vkattn demo`, the tests and the benchmarks:
// a named case that runs on a context and reports parity and timing.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "check/bound_pipelines.hpp"
#include "reference/tolerance.hpp"
#include "vkattn/caps.hpp"
#include "vkattn/context.hpp"

namespace vkattn::check {

struct CheckResult {
  std::string name;
  std::string variant;
  std::string reason;          // why the planner chose the variant
  reference::CompareResult cmp;
  reference::Tolerance tol;
  bool passed = false;
  std::string error;           // an exception's message, if the case threw
  double gpu_ms = 0.0;         // median GPU time when timed
  double gpu_min_ms = 0.0;     // fastest and slowest timed run
  double gpu_max_ms = 0.0;
  double bytes_moved = 0.0;    // bytes a perfect kernel must move
  double flops = 0.0;          // useful floating-point operations
  uint32_t input_sets = 0;     // input sets the timed calls rotated among (check/timing.hpp); 0: none
  std::vector<BoundPipeline> pipelines;  // what the timed recording bound (cases recorded by host::run_recorded)
};

struct RunOptions {
  int timed_runs = 0;        // > 0: time at least that many calls (check/timing.hpp) and report the median
  bool skip_oracle = false;  // benchmarks of shapes too large for the CPU oracle
};

struct CheckCase {
  std::string name;
  std::function<CheckResult(Context&, const RunOptions&)> run;
};

enum class GridSize { ci, full };

// Families: "text", "vision", "audio", "kvcache". Each returns the cases this device can run.
std::vector<std::string> check_families();
std::vector<CheckCase> check_cases(const std::string& family, const DeviceCaps& caps, GridSize size);
// The demo's shapes: the models' own on GPUs; on CPU devices (lavapipe runs
// kernels at CPU speed) the same models with shorter sequences, so the demo
// finishes in seconds.
enum class DemoSize { model, cpu };
DemoSize demo_size_for(const DeviceCaps& caps);
// The demo's cases of a family (model-shaped, timed).
std::vector<CheckCase> demo_cases(const std::string& family, DemoSize size);

// Per-family providers (one file each).
std::vector<CheckCase> text_check_cases(const DeviceCaps& caps, GridSize size);
std::vector<CheckCase> text_demo_cases(DemoSize size);
std::vector<CheckCase> vision_check_cases(const DeviceCaps& caps, GridSize size);
std::vector<CheckCase> vision_demo_cases(DemoSize size);
std::vector<CheckCase> audio_check_cases(const DeviceCaps& caps, GridSize size);
std::vector<CheckCase> audio_demo_cases(DemoSize size);
std::vector<CheckCase> bdpa_check_cases(const DeviceCaps& caps, GridSize size);
std::vector<CheckCase> bdpa_demo_cases(DemoSize size);

}  // namespace vkattn::check

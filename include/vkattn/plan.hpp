// Kernel selection: which variant runs a call on a device, and why.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vkattn/caps.hpp"
#include "vkattn/export.hpp"
#include "vkattn/types.hpp"

namespace vkattn {

enum class Phase : uint8_t { prefill, decode };
VKATTN_API std::string_view to_string(Phase p);

// A "kernel path": variant overrides by phase and layer, as runtimes ship them
// per model. The first entry matching (phase, layer) wins.
struct KernelPathEntry {
  Phase phase = Phase::decode;
  std::vector<uint32_t> layers;  // empty: every layer
  std::string variant;
};

struct PlanOptions {
  std::string variant;                 // force one variant by name (wins over the path)
  std::vector<KernelPathEntry> path;   // per phase/layer overrides
  uint32_t layer = 0;                  // which layer this call is, for the path
  bool strict = false;                 // a rejected override is an error, not a fallback
  // Tuning overrides (0 = the planner's choice), for autotuning and experiments.
  uint32_t splits = 0;      // KV splits of a split variant
  uint32_t tile_keys = 0;   // keys per step (shared tile, or per subgroup for online variants)
  // Precision policy: f32 inputs are computed at f32 precision unless this is
  // set; then the planner may pick variants that round f32 Q/K/V to f16 (the
  // tensor-core prefill rows prefill_flash_*_f16kv round Q once when loaded),
  // and its explanation says so. Naming such a variant in `variant` or `path`
  // is the same permission.
  bool allow_reduced_precision = false;
};

// One row considered by the planner.
struct PlanCandidate {
  std::string variant;
  bool eligible = false;
  std::string why;  // requirement it failed, or the rule it matched
};

}  // namespace vkattn

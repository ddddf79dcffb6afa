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
  bool operator==(const KernelPathEntry&) const = default;
};

struct PlanOptions {
  std::string variant;                 // force one variant by name (wins over the path)
  std::vector<KernelPathEntry> path;   // per phase/layer overrides
  uint32_t layer = 0;                  // which layer this call is, for the path
  bool strict = false;                 // a rejected override is an error, not a fallback
  // Tuning overrides (0 = the planner's choice), for autotuning and experiments.
  uint32_t splits = 0;      // KV splits of a split variant
  uint32_t tile_keys = 0;   // keys per step (shared tile, or per subgroup for online variants)
  uint32_t rows = 0;        // query rows (positions x query heads of one KV head) per workgroup, at most
                            // (text variants other than the tensor-core rows, whose rows fit shared memory)
  // Precision policy: f32 inputs keep f32 precision unless this is set; then
  // the planner may pick variants that round f32 Q/K/V to f16 (the
  // tensor-core prefill rows prefill_flash_*_f16kv round Q once when loaded),
  // and its explanation says so. Naming such a variant in `variant` or `path`
  // is the same permission. (The tensor-core decode rows take f32 Q without
  // it: they keep Q as two f16 parts; like every tensor-core row they multiply
  // V by f16 weights.)
  bool allow_reduced_precision = false;
  // Tuning-cache entries (`vkattn tune`) may decide variant and geometry where
  // no override does; false plans by the rules alone.
  bool use_tuning_cache = true;
  bool operator==(const PlanOptions&) const = default;
};

// One row considered by the planner.
struct PlanCandidate {
  std::string variant;
  bool eligible = false;
  std::string why;  // requirement it failed, or the rule it matched
  bool operator==(const PlanCandidate&) const = default;
};

enum class PlanFamily : uint8_t { text, vision, audio, bdpa };
VKATTN_API std::string_view to_string(PlanFamily f);

// Workgroup geometry of the chosen variant (0 where the family has no such number).
struct PlanGeometry {
  uint32_t workgroup_size = 0;
  uint32_t query_rows = 0;       // query positions (text) or patches (vision) per workgroup
  uint32_t head_group = 0;       // query heads per workgroup (text: one KV head's)
  uint32_t tile_keys = 0;        // keys per step
  uint32_t splits = 1;           // KV splits (text decode)
  uint32_t acc_chunks = 0;       // accumulator vec4s per invocation
  uint32_t key_lanes = 0;        // lanes sharing one key row (decode_flash)
  uint32_t shared_bytes = 0;     // shared memory the kernel declares
  uint32_t required_subgroup_size = 0;  // 0: the driver's choice
  uint32_t kv_stages = 0;        // K/V tile buffers in shared memory (tensor-core flash engine; 0: none)
  bool operator==(const PlanGeometry&) const = default;
};

// One compute dispatch of a plan: which embedded module, with which
// specialization constants (value of constant_id i at index i), over which grid.
struct PlanDispatch {
  std::string module;
  std::vector<uint32_t> spec_constants;
  uint32_t required_subgroup_size = 0;
  uint32_t grid[3] = {1, 1, 1};
  bool operator==(const PlanDispatch&) const = default;
};

// Everything needed to record a call, decided once: plain data that prints,
// saves (to_json) and loads (plan_from_json). Made by plan_text, plan_vision,
// plan_audio or plan_bdpa for one device and call shape and recorded with `record`; a plan
// recorded for another call or device is rejected with an Error naming what differs.
struct VKATTN_API Plan {
  PlanFamily family = PlanFamily::text;
  std::string variant;                    // stable variant id
  std::string reason;                     // why it won
  std::vector<PlanCandidate> candidates;  // every row considered, with why
  std::vector<std::string> warnings;      // override fallbacks, ignored tuning entries
  bool tuned = false;                     // a tuning-cache entry decided variant or geometry
  PlanGeometry geometry;
  std::vector<PlanDispatch> dispatches;   // in recording order
  uint64_t scratch_bytes = 0;             // device scratch a recording takes
  bool operator==(const Plan&) const = default;
  // The parts that decide what is recorded (variant, geometry, dispatches, scratch).
  bool same_work(const Plan& other) const;
};

VKATTN_API std::string to_json(const Plan& plan, int indent = 2);
VKATTN_API Plan plan_from_json(const std::string& json_text);  // throws Error naming the field
// Candidates, winner and reason, geometry, warnings: what `vkattn plan` prints.
VKATTN_API std::string explain(const Plan& plan);

}  // namespace vkattn

// One case type for BDPA attention, shared by the tests, `vkattn check
// --family kvcache`, the demo and `vkattn run bdpa --check`: a contiguous
// pre-RoPE cache with repeating token ids is built into a BDPA cache on the
// GPU, attended over, and judged twice by the float64 oracle.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "check/check_case.hpp"
#include "reference/bdpa_reference.hpp"
#include "vkattn/bdpa.hpp"

namespace vkattn::check {

struct BdpaCase {
  std::string name;
  BdpaParams params;        // capacity = C slots of the contiguous cache; num_basis/num_residual are set to B x C
  uint32_t vocab = 11;      // token ids drawn below it: few, so positions share basis rows
  DType q = DType::f32, basis = DType::f16, out = DType::f32;  // the contiguous cache is stored as `basis`
  std::string variant;      // forced with strict mode; empty: the planner decides
  uint32_t splits = 0;
  float logit_scale = 1.0f;
  float spread = 0.3f;       // per-position part of each row (what the residuals hold) against a unit token part
  bool gpu_lengths = false;   // kv_len and start_pos from u32 GPU buffers
  bool shuffle_index = false; // index entries permuted on the host after the build (positions travel with them)
  uint32_t position_offset = 0;  // added to every index position after the build (keys move later)
  uint32_t seed = 1;
};

// RoPE tables: `positions` rows of rotary_dim / 2 angles pos * theta^(-2i / rotary_dim).
struct RopeTables {
  std::vector<float> cos, sin;
};
RopeTables rope_tables(uint32_t positions, uint32_t rotary_dim, double theta = 10000.0);

// Checks, in order: the builder's basis count and rows (one per distinct token,
// in token-id order); the exact path (the oracle over the cache the kernel
// read, at the output dtype's tolerance, in `cmp`); end to end against attention over
// the unquantized post-RoPE cache within the int8 bound (tolerance_for with
// i8 KV), skipped where the index was moved (position_offset).
CheckResult run_bdpa_case(Context& ctx, const BdpaCase& c, const RunOptions& options = {});
std::vector<BdpaCase> bdpa_check_grid(const DeviceCaps& caps, GridSize size);
std::string describe(const BdpaCase& c);

// The builder's params for the cache of an attention call (p.kv_capacity slots
// per sequence, p.kv_len filled), its output tensors (basis in `basis`), and
// the attention tensors over them (q, out and the RoPE tables left to the caller).
BdpaBuildParams build_params(const BdpaParams& p, uint32_t vocab);
BdpaBuildTensors build_outputs(Context& ctx, const BdpaBuildParams& bp, DType basis);
BdpaTensors attention_tensors(const BdpaBuildTensors& bt);

// Host copy of a built cache (what the exact-path oracle reads).
reference::BdpaCache download_bdpa_cache(Context& ctx, const BdpaParams& p, DType basis, const BdpaTensors& t);

}  // namespace vkattn::check

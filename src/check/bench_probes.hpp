// GPU-side benchmark inputs and the probes that measure a device's ceilings
// (read bandwidth, cooperative-matrix fp16 peak, the time of the smallest
// dispatch timed as attention calls are), on the shaders of
// src/shaders/bench.shaders.cmake.
#pragma once

#include <cstdint>
#include <string>

#include "vkattn/context.hpp"
#include "vkattn/recorder.hpp"
#include "vkattn/tensor.hpp"

namespace vkattn::check {

// Element `i` of a tensor that record_fill filled with `seed` (exact in f32,
// f16 and bf16), computed on the host.
float pattern_value(uint32_t seed, uint32_t i);
// Records a fill of `t` (f32 | f16 | bf16 | u32, read as f32 bits; a whole
// number of u32 words) with the pattern of `seed`.
void record_fill(Recorder& rec, const Tensor& t, uint32_t seed);

struct ProbeResult {
  std::string name;      // read_bandwidth | coopmat_fp16 | dispatch_floor
  bool supported = false;
  std::string reason;    // why it did not run, when !supported
  double ms = 0.0, min_ms = 0.0, max_ms = 0.0;
  double bytes = 0.0;    // read by the read probe
  double flops = 0.0;    // done by the coopmat probe
  bool checked = false;  // the GPU's result equals the host's
  std::string detail;    // what was checked, or how it differed
};

// Streams `bytes` (clamped to the device's buffer limits, a multiple of 16)
// and checks the GPU's sum of its words against the host's.
ProbeResult read_probe(Context& ctx, uint64_t bytes, int runs);
// fp16 x fp16 -> fp32 16x16x16 multiply-adds through VK_NV_cooperative_matrix
// on `workgroups` subgroups of `iterations` steps; unsupported without that shape.
ProbeResult coopmat_probe(Context& ctx, uint32_t workgroups, uint32_t iterations, int runs);
// The floor under every short call: one workgroup filling 256 bytes, timed
// back to back like the attention calls (time_back_to_back: a barrier before
// each copy, timestamps around all of them), the filled words checked.
ProbeResult dispatch_floor_probe(Context& ctx, int runs);

}  // namespace vkattn::check

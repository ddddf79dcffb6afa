// Audio block-local attention cases shared by the tests, `vkattn check
// --family audio`, `vkattn demo` and the benchmarks.
#pragma once

#include <string>
#include <vector>

#include "check/check_case.hpp"
#include "vkattn/audio.hpp"

namespace vkattn::check {

struct AudioCase {
  std::string name;
  AudioAttentionParams params;
  DType dtype = DType::f32;  // Q, K, V, rel_pos
  DType out = DType::f32;
  float logit_scale = 1.0f;  // multiplies Q: large values drive logits into the cap
  uint32_t seed = 1;
};

CheckResult run_audio_case(Context& ctx, const AudioCase& c, const RunOptions& options = {});
std::vector<AudioCase> audio_check_grid(GridSize size);
std::string describe(const AudioCase& c);

}  // namespace vkattn::check

// The pipelines a recording bound, with what made each and the driver's
// statistics of it (`vkattn bench --pipeline-stats`).
#pragma once

#include <vector>

#include "vk/pipeline_cache.hpp"
#include "vkattn/recorder.hpp"

namespace vkattn::check {

struct BoundPipeline {
  vk::PipelineKey key;
  // Empty unless the context captures statistics (ContextOptions::pipeline_statistics).
  std::vector<vk::PipelineStatistic> statistics;
};

// Those bound since rec's last reset, each once, in order of first use.
std::vector<BoundPipeline> bound_pipelines(Recorder& rec);

}  // namespace vkattn::check

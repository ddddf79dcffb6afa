#include "check/bound_pipelines.hpp"

#include "vk/recorder_impl.hpp"

namespace vkattn::check {

std::vector<BoundPipeline> bound_pipelines(Recorder& rec) {
  std::vector<BoundPipeline> out;
  for (const vk::Pipeline* p : rec.impl().bound_pipelines()) out.push_back({p->key, p->statistics});
  return out;
}

}  // namespace vkattn::check

// The driver's own statistics of a pipeline (VK_KHR_pipeline_executable_properties):
// what its compiler made of a shader, such as registers per invocation,
// shared memory and spills on NVIDIA, or instruction counts on lavapipe.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

struct VolkDeviceTable;

namespace vkattn::vk {

struct PipelineStatistic {
  std::string executable;   // the executable (compiled stage) it describes, as the driver names it
  std::string name;         // e.g. "Register Count"
  std::string description;  // the driver's
  std::variant<bool, int64_t, uint64_t, double> value;
};

// Every statistic of every executable of `pipeline`, which was created with
// VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR on a device with
// pipelineExecutableInfo enabled.
std::vector<PipelineStatistic> read_pipeline_statistics(const VolkDeviceTable& vk, VkDevice device,
                                                        VkPipeline pipeline);

// The value as text ("128", "true", "0.5").
std::string value_text(const PipelineStatistic& s);

}  // namespace vkattn::vk

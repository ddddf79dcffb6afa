#include "vk/pipeline_statistics.hpp"

#include <fmt/format.h>

#include "vk/check.hpp"
#include "vk/volk.hpp"

namespace vkattn::vk {

namespace {

decltype(PipelineStatistic::value) statistic_value(const VkPipelineExecutableStatisticKHR& s) {
  switch (s.format) {
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: return s.value.b32 != VK_FALSE;
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: return s.value.i64;
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: return s.value.u64;
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR: return s.value.f64;
    default: return s.value.u64;  // a format newer than these headers: its raw bits
  }
}

}  // namespace

std::vector<PipelineStatistic> read_pipeline_statistics(const VolkDeviceTable& vk, VkDevice device,
                                                        VkPipeline pipeline) {
  VkPipelineInfoKHR info{VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR};
  info.pipeline = pipeline;
  uint32_t executables = 0;
  check(vk.vkGetPipelineExecutablePropertiesKHR(device, &info, &executables, nullptr),
        "counting a pipeline's executables");
  std::vector<VkPipelineExecutablePropertiesKHR> props(executables, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR});
  check(vk.vkGetPipelineExecutablePropertiesKHR(device, &info, &executables, props.data()),
        "reading a pipeline's executables");
  std::vector<PipelineStatistic> out;
  for (uint32_t e = 0; e < executables; ++e) {
    VkPipelineExecutableInfoKHR exec{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
    exec.pipeline = pipeline;
    exec.executableIndex = e;
    uint32_t n = 0;
    check(vk.vkGetPipelineExecutableStatisticsKHR(device, &exec, &n, nullptr), "counting a pipeline's statistics");
    std::vector<VkPipelineExecutableStatisticKHR> stats(n, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR});
    check(vk.vkGetPipelineExecutableStatisticsKHR(device, &exec, &n, stats.data()), "reading a pipeline's statistics");
    for (uint32_t i = 0; i < n; ++i)
      out.push_back({props[e].name, stats[i].name, stats[i].description, statistic_value(stats[i])});
  }
  return out;
}

std::string value_text(const PipelineStatistic& s) {
  return std::visit([](auto v) { return fmt::format("{}", v); }, s.value);
}

}  // namespace vkattn::vk

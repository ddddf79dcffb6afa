// Compute pipelines from embedded SPIR-V, cached by (module, specialization
// constants, required subgroup size) so no call creates a pipeline twice.
#pragma once

#include <vulkan/vulkan.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "vk/pipeline_statistics.hpp"

struct VolkDeviceTable;

namespace vkattn::vk {

// What a shader binds: storage buffers 0..N-1 in set 0, and push constants.
struct ShaderInterface {
  uint32_t storage_buffers = 0;
  uint32_t push_constant_bytes = 0;
};

struct PipelineKey {
  std::string module;
  std::vector<uint32_t> spec;  // value of constant_id i at index i
  uint32_t required_subgroup_size = 0;  // 0: driver's choice
  auto operator<=>(const PipelineKey&) const = default;
};

struct Pipeline {
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  ShaderInterface iface;
  PipelineKey key;  // what made it: module, specialization, subgroup size
  // The driver's statistics, when the cache captures them (else empty).
  std::vector<PipelineStatistic> statistics;
};

class PipelineCache {
 public:
  // `vk`: the device's functions (Runtime::vk()), which outlive the cache.
  // `capture_statistics`: create pipelines with the driver's statistics and
  // keep them on each Pipeline (needs pipelineExecutableInfo enabled).
  PipelineCache(const VolkDeviceTable& vk, VkDevice device, bool capture_statistics)
      : vk_(&vk), device_(device), capture_statistics_(capture_statistics) {}
  ~PipelineCache();
  const Pipeline& get(const PipelineKey& key, const ShaderInterface& iface);
  size_t size() const { return pipelines_.size(); }
  bool captures_statistics() const { return capture_statistics_; }

 private:
  struct Layout {
    VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
    VkPipelineLayout layout = VK_NULL_HANDLE;
  };
  const Layout& layout_for(const ShaderInterface& iface);
  VkShaderModule module_for(const std::string& name);

  const VolkDeviceTable* vk_;
  VkDevice device_;
  bool capture_statistics_;
  std::mutex mutex_;
  std::map<std::pair<uint32_t, uint32_t>, Layout> layouts_;
  std::map<std::string, VkShaderModule> modules_;
  std::map<PipelineKey, std::unique_ptr<Pipeline>> pipelines_;
};

}  // namespace vkattn::vk

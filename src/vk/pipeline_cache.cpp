#include "vk/pipeline_cache.hpp"

#include <fmt/format.h>

#include "vk/check.hpp"
#include "vk/fault_injection.hpp"
#include "vk/embedded_shaders.hpp"
#include "vk/volk.hpp"

namespace vkattn::vk {

PipelineCache::~PipelineCache() {
  for (auto& [key, p] : pipelines_) vk_->vkDestroyPipeline(device_, p->pipeline, nullptr);
  for (auto& [name, m] : modules_) vk_->vkDestroyShaderModule(device_, m, nullptr);
  for (auto& [key, l] : layouts_) {
    vk_->vkDestroyPipelineLayout(device_, l.layout, nullptr);
    vk_->vkDestroyDescriptorSetLayout(device_, l.set_layout, nullptr);
  }
}

const PipelineCache::Layout& PipelineCache::layout_for(const ShaderInterface& iface) {
  auto key = std::make_pair(iface.storage_buffers, iface.push_constant_bytes);
  auto it = layouts_.find(key);
  if (it != layouts_.end()) return it->second;
  std::vector<VkDescriptorSetLayoutBinding> bindings(iface.storage_buffers);
  for (uint32_t i = 0; i < iface.storage_buffers; ++i)
    bindings[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  VkDescriptorSetLayoutCreateInfo dsl{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  dsl.bindingCount = iface.storage_buffers;
  dsl.pBindings = bindings.data();
  Layout l;
  check(vk_->vkCreateDescriptorSetLayout(device_, &dsl, nullptr, &l.set_layout), "creating a descriptor set layout");
  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, iface.push_constant_bytes};
  VkPipelineLayoutCreateInfo pl{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pl.setLayoutCount = 1;
  pl.pSetLayouts = &l.set_layout;
  pl.pushConstantRangeCount = iface.push_constant_bytes ? 1 : 0;
  pl.pPushConstantRanges = &range;
  check(vk_->vkCreatePipelineLayout(device_, &pl, nullptr, &l.layout), "creating a pipeline layout");
  return layouts_.emplace(key, l).first->second;
}

VkShaderModule PipelineCache::module_for(const std::string& name) {
  auto it = modules_.find(name);
  if (it != modules_.end()) return it->second;
  auto words = embedded_shader(name);
  VkShaderModuleCreateInfo info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  info.codeSize = words.size_bytes();
  info.pCode = words.data();
  VkShaderModule m;
  check(vk_->vkCreateShaderModule(device_, &info, nullptr, &m), fmt::format("creating shader module {}", name));
  return modules_.emplace(name, m).first->second;
}

const Pipeline& PipelineCache::get(const PipelineKey& key, const ShaderInterface& iface) {
  std::lock_guard lock(mutex_);
  auto it = pipelines_.find(key);
  if (it != pipelines_.end()) return *it->second;

  const Layout& layout = layout_for(iface);
  std::vector<VkSpecializationMapEntry> entries(key.spec.size());
  for (uint32_t i = 0; i < key.spec.size(); ++i) entries[i] = {i, i * 4u, 4};
  VkSpecializationInfo spec{static_cast<uint32_t>(entries.size()), entries.data(), key.spec.size() * 4,
                            key.spec.data()};

  VkPipelineShaderStageRequiredSubgroupSizeCreateInfo subgroup{
      VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO};
  subgroup.requiredSubgroupSize = key.required_subgroup_size;

  VkComputePipelineCreateInfo info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  info.stage.module = module_for(key.module);
  info.stage.pName = "main";
  info.stage.pSpecializationInfo = entries.empty() ? nullptr : &spec;
  if (key.required_subgroup_size) {
    info.stage.pNext = &subgroup;
    info.stage.flags = VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT;
  }
  info.layout = layout.layout;
  if (capture_statistics_) info.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
  auto p = std::make_unique<Pipeline>();
  VkResult r = injected_fault(FaultSite::pipeline_creation);
  if (r == VK_SUCCESS) r = vk_->vkCreateComputePipelines(device_, VK_NULL_HANDLE, 1, &info, nullptr, &p->pipeline);
  check(r, fmt::format("creating the compute pipeline for {}", key.module));
  if (capture_statistics_) {
    try {
      p->statistics = read_pipeline_statistics(*vk_, device_, p->pipeline);
    } catch (...) {  // not cached, so nothing else would destroy it
      vk_->vkDestroyPipeline(device_, p->pipeline, nullptr);
      throw;
    }
  }
  p->layout = layout.layout;
  p->set_layout = layout.set_layout;
  p->iface = iface;
  p->key = key;
  return *pipelines_.emplace(key, std::move(p)).first->second;
}

}  // namespace vkattn::vk

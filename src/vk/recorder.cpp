#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "vk/check.hpp"
#include "vk/recorder_impl.hpp"
#include "vk/runtime.hpp"
#include "vk/volk.hpp"
#include "vkattn/context.hpp"
#include "vkattn/error.hpp"
#include "vkattn/recorder.hpp"

namespace vkattn::vk {

namespace {
constexpr uint32_t kSetsPerPool = 256;
constexpr uint32_t kBuffersPerSet = 16;
constexpr uint32_t kMaxQueries = 256;
}  // namespace

RecorderImpl::RecorderImpl(Context& ctx, VkCommandBuffer external) : ctx_(ctx), rt_(ctx.runtime()) {
  if (external) {
    cb_ = external;
    external_ = true;
    recording_ = true;
  } else {
    // A pool of its own: command pools are externally synchronized, and each
    // thread records with its own recorder.
    VkCommandPoolCreateInfo pi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pi.queueFamilyIndex = rt_.queue_family();
    check(rt_.vk().vkCreateCommandPool(rt_.device(), &pi, nullptr, &command_pool_), "creating a command pool");
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = command_pool_;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    check(rt_.vk().vkAllocateCommandBuffers(rt_.device(), &ai, &cb_), "allocating a command buffer");
    VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    check(rt_.vk().vkCreateFence(rt_.device(), &fi, nullptr, &fence_), "creating a fence");
  }
}

RecorderImpl::~RecorderImpl() {
  VkDevice d = rt_.device();
  if (submitted_ && !rt_.lost()) {
    try {
      rt_.wait_fence(fence_, "waiting for recorded attention work before destroying its recorder");
    } catch (const Error&) {  // a destructor cannot throw; the loss stays recorded on the runtime
    }
  }
  for (auto p : pools_) rt_.vk().vkDestroyDescriptorPool(d, p, nullptr);
  for (auto& a : scratch_) rt_.release_scratch(std::move(a));
  release_zeroed();
  if (queries_) rt_.vk().vkDestroyQueryPool(d, queries_, nullptr);
  if (fence_) rt_.vk().vkDestroyFence(d, fence_, nullptr);
  if (command_pool_) rt_.vk().vkDestroyCommandPool(d, command_pool_, nullptr);  // frees cb_
}

void RecorderImpl::ensure_recording() {
  if (ended_)
    throw Error(ErrorKind::invalid_argument,
                "recorder: expected a recording command buffer, got one already submitted; call reset() first");
  if (recording_) return;
  rt_.require_alive();
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  check(rt_.vk().vkBeginCommandBuffer(cb_, &bi), "beginning a command buffer");
  recording_ = true;
}

namespace {
// What a barrier's destination covers for each consumer (hazard_tracker.hpp).
struct ConsumerScope {
  VkPipelineStageFlags stage;
  VkAccessFlags access;
};
constexpr std::array<ConsumerScope, kConsumers> kConsumerScopes = {{
    {VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT},
    {VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT},
    {VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT, VK_ACCESS_INDIRECT_COMMAND_READ_BIT},
}};
}  // namespace

void RecorderImpl::order_against(std::span<const BufferRef> buffers, Consumer consumer,
                                 const BufferRef* indirect_args) {
  std::vector<BufferUse>& uses = uses_;  // reused: no allocation per recorded command
  uses.clear();
  for (auto& b : buffers) uses.push_back({b.buffer, b.access, consumer});
  if (indirect_args) uses.push_back({indirect_args->buffer, Access::read, Consumer::indirect_fetch});
  const ConsumerMask needed = hazards_.needed(uses);
  if (needed) {
    // Past a consumer's first barrier, earlier work is this recorder's compute and transfer commands.
    const bool after_caller = hazards_.waits_for_caller(needed);
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    if (after_caller) mb.srcAccessMask |= VK_ACCESS_HOST_WRITE_BIT;
    const VkPipelineStageFlags src = after_caller ? VK_PIPELINE_STAGE_ALL_COMMANDS_BIT | VK_PIPELINE_STAGE_HOST_BIT
                                                  : VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
    VkPipelineStageFlags dst = 0;
    for (size_t c = 0; c < kConsumers; ++c) {
      if (!(needed & consumer_bit(static_cast<Consumer>(c)))) continue;
      dst |= kConsumerScopes[c].stage;
      mb.dstAccessMask |= kConsumerScopes[c].access;
    }
    rt_.vk().vkCmdPipelineBarrier(cb_, src, dst, 0, 1, &mb, 0, nullptr, 0, nullptr);
    hazards_.barrier_recorded(needed);
  }
  hazards_.recorded(uses);
  for (auto& b : buffers)
    if (b.keep) retained_.push_back(b.keep);
  if (indirect_args && indirect_args->keep) retained_.push_back(indirect_args->keep);
}

VkDescriptorSet RecorderImpl::allocate_set(const Pipeline& p) {
  if (p.iface.storage_buffers > kBuffersPerSet)
    throw Error(ErrorKind::invalid_argument, fmt::format("shader interface: expected at most {} buffers, got {}",
                                                         kBuffersPerSet, p.iface.storage_buffers));
  if (pools_.empty() || sets_in_last_pool_ == kSetsPerPool) {
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kSetsPerPool * kBuffersPerSet};
    VkDescriptorPoolCreateInfo info{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    info.maxSets = kSetsPerPool;
    info.poolSizeCount = 1;
    info.pPoolSizes = &size;
    VkDescriptorPool pool;
    check(rt_.vk().vkCreateDescriptorPool(rt_.device(), &info, nullptr, &pool), "creating a descriptor pool");
    pools_.push_back(pool);
    sets_in_last_pool_ = 0;
  }
  VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  ai.descriptorPool = pools_.back();
  ai.descriptorSetCount = 1;
  ai.pSetLayouts = &p.set_layout;
  VkDescriptorSet set;
  check(rt_.vk().vkAllocateDescriptorSets(rt_.device(), &ai, &set), "allocating a descriptor set");
  ++sets_in_last_pool_;
  return set;
}

void RecorderImpl::bind(const Pipeline& p, std::span<const BufferRef> buffers, std::span<const std::byte> push) {
  if (buffers.size() != p.iface.storage_buffers)
    throw Error(ErrorKind::invalid_argument, fmt::format("dispatch: expected {} buffers for the pipeline, got {}",
                                                         p.iface.storage_buffers, buffers.size()));
  if (push.size() != p.iface.push_constant_bytes)
    throw Error(ErrorKind::invalid_argument, fmt::format("dispatch: expected {} push-constant bytes, got {}",
                                                         p.iface.push_constant_bytes, push.size()));
  VkDescriptorSet set = allocate_set(p);
  std::vector<VkDescriptorBufferInfo> infos(buffers.size());
  std::vector<VkWriteDescriptorSet> writes(buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    infos[i] = buffers[i].by_address ? VkDescriptorBufferInfo{rt_.placeholder_buffer(), 0, VK_WHOLE_SIZE}
                                     : VkDescriptorBufferInfo{buffers[i].buffer, buffers[i].offset, buffers[i].range};
    writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[i].dstSet = set;
    writes[i].dstBinding = static_cast<uint32_t>(i);
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &infos[i];
  }
  rt_.vk().vkUpdateDescriptorSets(rt_.device(), static_cast<uint32_t>(writes.size()), writes.data(), 0, nullptr);
  rt_.vk().vkCmdBindPipeline(cb_, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline);
  if (std::find(bound_.begin(), bound_.end(), &p) == bound_.end()) bound_.push_back(&p);
  rt_.vk().vkCmdBindDescriptorSets(cb_, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0, 1, &set, 0, nullptr);
  if (!push.empty())
    rt_.vk().vkCmdPushConstants(cb_, p.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, static_cast<uint32_t>(push.size()),
                       push.data());
}

void RecorderImpl::dispatch(const Pipeline& p, std::span<const BufferRef> buffers, std::span<const std::byte> push,
                            uint32_t gx, uint32_t gy, uint32_t gz) {
  const auto& lim = rt_.caps().max_workgroup_count;
  if (gx > lim[0] || gy > lim[1] || gz > lim[2])
    throw Error(ErrorKind::unsupported, fmt::format("dispatch: expected workgroup counts within [{}, {}, {}], got "
                                                    "[{}, {}, {}]",
                                                    lim[0], lim[1], lim[2], gx, gy, gz));
  if (gx == 0 || gy == 0 || gz == 0) return;
  ensure_recording();
  order_against(buffers, Consumer::shader);
  bind(p, buffers, push);
  rt_.vk().vkCmdDispatch(cb_, gx, gy, gz);
  ++dispatches_;
}

void RecorderImpl::dispatch_indirect(const Pipeline& p, std::span<const BufferRef> buffers,
                                     std::span<const std::byte> push, const BufferRef& args) {
  ensure_recording();
  order_against(buffers, Consumer::shader, &args);
  bind(p, buffers, push);
  rt_.vk().vkCmdDispatchIndirect(cb_, args.buffer, args.offset);
  ++dispatches_;
}

void RecorderImpl::fill(const BufferRef& dst, uint32_t value) {
  ensure_recording();
  BufferRef w = dst;
  w.access = Access::write;
  order_against(std::span(&w, 1), Consumer::transfer);
  rt_.vk().vkCmdFillBuffer(cb_, dst.buffer, dst.offset, dst.range, value);
}

BufferRef RecorderImpl::scratch(VkDeviceSize bytes) {
  scratch_.push_back(rt_.acquire_scratch(bytes));
  return {scratch_.back()->buffer(), 0, bytes, Access::read_write};
}

BufferRef RecorderImpl::zeroed_scratch(VkDeviceSize bytes) {
  zeroed_.push_back(rt_.acquire_zeroed(bytes));
  return {zeroed_.back()->buffer(), 0, bytes, Access::read_write};
}

void RecorderImpl::release_zeroed() {
  // After a device loss a replay may have stopped half way: its words are
  // not known to be zero, and the runtime takes no more work anyway.
  if (!rt_.lost())
    for (auto& a : zeroed_) rt_.release_zeroed(std::move(a));
  zeroed_.clear();
}

void RecorderImpl::update(const BufferRef& dst, std::span<const std::byte> bytes) {
  if (bytes.size() % 4 || bytes.size() > 65536)
    throw Error(ErrorKind::invalid_argument,
                fmt::format("update: expected a multiple of 4 bytes up to 65536, got {}", bytes.size()));
  if (bytes.empty()) return;
  ensure_recording();
  BufferRef w = dst;
  w.access = Access::write;
  order_against(std::span(&w, 1), Consumer::transfer);
  rt_.vk().vkCmdUpdateBuffer(cb_, dst.buffer, dst.offset, bytes.size(), bytes.data());
}

uint32_t RecorderImpl::timestamp() {
  if (!rt_.caps().timestamps) throw Error(ErrorKind::unsupported, "timestamp: the device's queue has no timestamps");
  ensure_recording();
  if (!queries_) {
    VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qi.queryCount = kMaxQueries;
    check(rt_.vk().vkCreateQueryPool(rt_.device(), &qi, nullptr, &queries_), "creating a timestamp pool");
  }
  if (!queries_reset_) {
    rt_.vk().vkCmdResetQueryPool(cb_, queries_, 0, kMaxQueries);
    queries_reset_ = true;
  }
  if (next_query_ >= kMaxQueries)
    throw Error(ErrorKind::invalid_argument, fmt::format("timestamp: expected at most {} per recording", kMaxQueries));
  rt_.vk().vkCmdWriteTimestamp(cb_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, next_query_);
  return next_query_++;
}

void RecorderImpl::submit() {
  if (external_)
    throw Error(ErrorKind::invalid_argument, "recorder: expected an own command buffer, got the caller's; the caller "
                                             "submits it");
  if (submitted_) wait();

  if (!ended_) {
    if (!recording_) ensure_recording();
    check(rt_.vk().vkEndCommandBuffer(cb_), "ending the command buffer");
    ended_ = true;
  }
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cb_;
  rt_.submit(si, fence_, "submitting recorded attention work");
  submitted_ = true;
}

void RecorderImpl::wait() {
  if (!submitted_) return;
  submitted_ = false;
  rt_.wait_fence(fence_, "waiting for recorded attention work");
}

double RecorderImpl::elapsed_ms(uint32_t from, uint32_t to) {
  uint64_t t[2];
  check(rt_.vk().vkGetQueryPoolResults(rt_.device(), queries_, from, 1, sizeof(uint64_t), &t[0], sizeof(uint64_t),
                              VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
        "reading a timestamp");
  check(rt_.vk().vkGetQueryPoolResults(rt_.device(), queries_, to, 1, sizeof(uint64_t), &t[1], sizeof(uint64_t),
                              VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
        "reading a timestamp");
  return static_cast<double>(t[1] - t[0]) * rt_.caps().timestamp_period_ns * 1e-6;
}

void RecorderImpl::reset() {
  wait();
  if (!external_) {
    check(rt_.vk().vkResetCommandBuffer(cb_, 0), "resetting the command buffer");
    recording_ = false;
    ended_ = false;
  }
  for (auto p : pools_) rt_.vk().vkDestroyDescriptorPool(rt_.device(), p, nullptr);
  pools_.clear();
  for (auto& a : scratch_) rt_.release_scratch(std::move(a));
  scratch_.clear();
  release_zeroed();
  retained_.clear();
  sets_in_last_pool_ = 0;
  next_query_ = 0;
  queries_reset_ = false;
  hazards_.begin_recording();
  dispatches_ = 0;
  bound_.clear();
}

}  // namespace vkattn::vk

namespace vkattn {

Recorder::Recorder(Context& ctx) : impl_(std::make_unique<vk::RecorderImpl>(ctx, VK_NULL_HANDLE)) {}
Recorder::Recorder(Context& ctx, VkCommandBuffer external) : impl_(std::make_unique<vk::RecorderImpl>(ctx, external)) {
  if (!external) throw Error(ErrorKind::invalid_argument, "command buffer: expected a VkCommandBuffer, got null");
}
Recorder::~Recorder() = default;
uint32_t Recorder::timestamp() { return impl_->timestamp(); }
void Recorder::barrier() { impl_->barrier(); }
void Recorder::submit() { impl_->submit(); }
void Recorder::wait() { impl_->wait(); }
void Recorder::run() {
  impl_->submit();
  impl_->wait();
}
double Recorder::elapsed_ms(uint32_t from, uint32_t to) { return impl_->elapsed_ms(from, to); }
void Recorder::reset() { impl_->reset(); }
Context& Recorder::context() { return impl_->context(); }
vk::RecorderImpl& Recorder::impl() { return *impl_; }

}  // namespace vkattn

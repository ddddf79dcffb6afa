#include "vk/runtime.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "ops/fragment_layout_probe.hpp"
#include "vk/cooperative_matrix2.hpp"
#include "vk/caps_query.hpp"
#include "vk/check.hpp"
#include "vk/fault_injection.hpp"
#include "vk/instance.hpp"
#include "vk/volk.hpp"
#include "vkattn/error.hpp"

namespace vkattn::vk {

namespace {

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::strcmp(v, "0") != 0;
}

// A tri-state option: < 0 defers to the environment variable `env`.
bool option_or_env(int option, const char* env) { return option < 0 ? env_flag(env) : option > 0; }

constexpr const char* kPipelineStatsEnv = "VKATTN_PIPELINE_STATS";

uint32_t compute_queue_family(VkPhysicalDevice pd) {
  uint32_t n = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, nullptr);
  std::vector<VkQueueFamilyProperties> qs(n);
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, qs.data());
  for (uint32_t i = 0; i < n; ++i)
    if (qs[i].queueFlags & VK_QUEUE_COMPUTE_BIT) return i;
  throw Error(ErrorKind::no_device, "device: expected a queue family with compute support, got none");
}

}  // namespace

Runtime::Runtime(const ContextOptions& options) : fence_timeout_ns_(uint64_t(options.fence_timeout_ms) * 1'000'000) {
  const bool validation = option_or_env(options.validation, "VKATTN_VALIDATION");
  instance_ = std::make_shared<Instance>(validation);
  auto pds = instance_->physical_devices();
  std::vector<DeviceInfo> infos;
  for (uint32_t i = 0; i < pds.size(); ++i) infos.push_back({i, query_caps(instance_->handle(), pds[i])});
  std::string selector = options.device;
  if (selector.empty())
    if (const char* env = std::getenv("VKATTN_DEVICE")) selector = env;
  const uint32_t index = choose_device(infos, selector);
  physical_ = pds[index];
  caps_ = infos[index].caps;
  limit_storage_buffer_range(options.storage_buffer_range_limit);
  if (VK_API_VERSION_MINOR(caps_.api_version) < 2 && VK_API_VERSION_MAJOR(caps_.api_version) == 1)
    throw Error(ErrorKind::unsupported, fmt::format("device '{}': expected Vulkan 1.2 or newer, got 1.{}", caps_.name,
                                                    VK_API_VERSION_MINOR(caps_.api_version)));
  queue_family_ = compute_queue_family(physical_);

  // Enable every optional feature the kernels use that the device has.
  VkPhysicalDeviceCooperativeMatrixFeaturesNV coop{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  coop.cooperativeMatrix = caps_.cooperative_matrix_nv;
  VkPhysicalDeviceSubgroupSizeControlFeatures sgc{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES};
  sgc.subgroupSizeControl = caps_.subgroup_size_control;
  sgc.computeFullSubgroups = caps_.subgroup_size_control;
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR exec{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  exec.pipelineExecutableInfo = VK_TRUE;
  // An extension's feature struct joins the chain only where the device has the extension.
  void** chain_end = &sgc.pNext;
  auto chain = [&](auto& features) {
    *chain_end = &features;
    chain_end = &features.pNext;
  };
  if (caps_.cooperative_matrix_nv) chain(coop);
  KhrCooperativeMatrixFeatures coopk;
  NvCooperativeMatrix2Features coop2;
  if (caps_.cooperative_matrix2_nv) {
    enable_workgroup_matrices(coopk, coop2);
    chain(coopk);
    chain(coop2);
  }
  if (caps_.pipeline_executable_info) chain(exec);
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &sgc};
  f12.shaderFloat16 = caps_.shader_float16;
  f12.shaderInt8 = caps_.shader_int8;
  f12.storageBuffer8BitAccess = caps_.storage_8bit;
  f12.bufferDeviceAddress = caps_.buffer_device_address;
  f12.vulkanMemoryModel = f12.vulkanMemoryModelDeviceScope = caps_.cooperative_matrix2_nv;
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, &f12};
  f11.storageBuffer16BitAccess = caps_.storage_16bit;
  VkPhysicalDeviceFeatures2 feats{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f11};
  feats.features.shaderInt16 = caps_.shader_int16;

  std::vector<const char*> extensions;
  if (caps_.cooperative_matrix_nv) extensions.push_back(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
  if (caps_.pipeline_executable_info) extensions.push_back(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
  if (caps_.cooperative_matrix2_nv) {
    extensions.push_back(kKhrCooperativeMatrixExtension);
    extensions.push_back(kNvCooperativeMatrix2Extension);
  }
  if (caps_.subgroup_size_control && VK_API_VERSION_MINOR(caps_.api_version) < 3)
    extensions.push_back(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);

  const float priority = 1.0f;
  VkDeviceQueueCreateInfo q{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  q.queueFamilyIndex = queue_family_;
  q.queueCount = 1;
  q.pQueuePriorities = &priority;
  VkDeviceCreateInfo info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &feats};
  info.queueCreateInfoCount = 1;
  info.pQueueCreateInfos = &q;
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  check(vkCreateDevice(physical_, &info, nullptr, &device_), fmt::format("creating the device '{}'", caps_.name));
  owns_device_ = true;
  load_device_functions();
  vk_->vkGetDeviceQueue(device_, queue_family_, 0, &queue_);
  finish_setup(option_or_env(options.pipeline_statistics, kPipelineStatsEnv));
}

Runtime::Runtime(const ExternalDevice& ext) {
  if (!ext.instance || !ext.physical_device || !ext.device || !ext.queue)
    throw Error(ErrorKind::invalid_argument,
                "external device: expected non-null instance, physical_device, device and queue, got a null handle");
  load_vulkan(ext.get_instance_proc_addr);
  load_instance_functions(ext.instance);
  physical_ = ext.physical_device;
  device_ = ext.device;
  queue_ = ext.queue;
  queue_family_ = ext.queue_family;
  caps_ = query_caps(ext.instance, physical_);
  // Only what the caller enabled may be used.
  caps_.shader_float16 &= ext.shader_float16_enabled;
  caps_.storage_16bit &= ext.storage_16bit_enabled;
  caps_.storage_8bit &= ext.storage_8bit_enabled;
  caps_.shader_int8 &= ext.shader_int8_enabled;
  caps_.subgroup_size_control &= ext.subgroup_size_control_enabled;
  caps_.cooperative_matrix_nv &= ext.cooperative_matrix_nv_enabled;
  caps_.buffer_device_address &= ext.buffer_device_address_enabled;
  caps_.pipeline_executable_info &= ext.pipeline_executable_info_enabled;
  if (!caps_.cooperative_matrix_nv) caps_.cooperative_matrix_shapes.clear();
  caps_.cooperative_matrix2_nv &= ext.cooperative_matrix2_nv_enabled;
  if (!caps_.cooperative_matrix2_nv) caps_.cooperative_matrix2_max_workgroup = 0;
  limit_storage_buffer_range(0);
  if (static_cast<bool>(ext.lock_queue) != static_cast<bool>(ext.unlock_queue))
    throw Error(ErrorKind::invalid_argument,
                fmt::format("external device: expected lock_queue and unlock_queue both set or both unset, got {}",
                            ext.lock_queue ? "lock_queue only" : "unlock_queue only"));
  lock_queue_ = ext.lock_queue;
  unlock_queue_ = ext.unlock_queue;
  load_device_functions();
  finish_setup(env_flag(kPipelineStatsEnv));
}

void Runtime::load_device_functions() {
  vk_ = std::make_unique<VolkDeviceTable>();
  volkLoadDeviceTable(vk_.get(), device_);
}

void Runtime::limit_storage_buffer_range(uint64_t limit) {
  if (limit == 0)
    if (const char* env = std::getenv("VKATTN_MAX_STORAGE_BUFFER_RANGE")) {
      char* end = nullptr;
      limit = std::strtoull(env, &end, 10);
      if (end == env || *end != '\0' || limit == 0)
        throw Error(ErrorKind::invalid_argument,
                    fmt::format("VKATTN_MAX_STORAGE_BUFFER_RANGE: expected a positive byte count, got '{}'", env));
    }
  if (limit > 0) caps_.max_storage_buffer_range = std::min<uint64_t>(caps_.max_storage_buffer_range, limit);
}

VkDeviceAddress Runtime::device_address(VkBuffer buffer) const {
  if (!caps_.buffer_device_address)
    throw Error(ErrorKind::unsupported,
                fmt::format("device '{}': expected bufferDeviceAddress to read a buffer by address, got none",
                            caps_.name));
  VkBufferDeviceAddressInfo info{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
  info.buffer = buffer;
  return vk_->vkGetBufferDeviceAddress(device_, &info);
}

void Runtime::finish_setup(bool pipeline_statistics) {
  vkGetPhysicalDeviceMemoryProperties(physical_, &memory_props_);
  VkCommandPoolCreateInfo pool{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pool.queueFamilyIndex = queue_family_;
  check(vk_->vkCreateCommandPool(device_, &pool, nullptr, &command_pool_), "creating a command pool");
  VkFenceCreateInfo fence{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  check(vk_->vkCreateFence(device_, &fence, nullptr, &one_shot_fence_), "creating a fence");
  pipelines_ = std::make_unique<PipelineCache>(*vk_, device_, pipeline_statistics && caps_.pipeline_executable_info);
}

Runtime::~Runtime() {
  // A borrowed device's queues belong to the host (vkDeviceWaitIdle would touch
  // them all); vkattn's own work has finished already: transfers wait for
  // their fence, recorders for theirs when destroyed.
  if (owns_device_) vk_->vkDeviceWaitIdle(device_);
  pipelines_.reset();
  staging_.reset();
  placeholder_.reset();
  free_scratch_.clear();
  free_zeroed_.clear();
  if (one_shot_fence_) vk_->vkDestroyFence(device_, one_shot_fence_, nullptr);
  if (command_pool_) vk_->vkDestroyCommandPool(device_, command_pool_, nullptr);
  if (owns_device_) vk_->vkDestroyDevice(device_, nullptr);
}

void Runtime::require_alive() const {
  if (lost_)
    throw Error(ErrorKind::device_lost,
                fmt::format("device '{}': lost earlier (see the first device_lost error); create a new Context",
                            caps_.name));
}

void Runtime::check(VkResult r, std::string_view doing) {
  if (r == VK_ERROR_DEVICE_LOST) lost_ = true;
  vk::check(r, doing);
}

void Runtime::submit(const VkSubmitInfo& info, VkFence fence, std::string_view doing) {
  require_alive();
  VkResult r = injected_fault(FaultSite::submit);
  if (r == VK_SUCCESS) {
    std::lock_guard lock(queue_mutex_);
    if (lock_queue_) lock_queue_();
    r = vk_->vkQueueSubmit(queue_, 1, &info, fence);
    if (unlock_queue_) unlock_queue_();
  }
  check(r, doing);
}

void Runtime::wait_fence(VkFence fence, std::string_view doing) {
  VkResult r = vk_->vkWaitForFences(device_, 1, &fence, VK_TRUE, fence_timeout_ns_);
  // An injected fault replaces the result of a wait that did happen, so the
  // fence is never reset while its work may still run.
  if (VkResult injected = injected_fault(FaultSite::fence_wait); injected != VK_SUCCESS) r = injected;
  if (r != VK_ERROR_DEVICE_LOST) vk_->vkResetFences(device_, 1, &fence);
  if (r == VK_TIMEOUT) {
    // The work may still be running: nothing it touches can be reused safely.
    lost_ = true;
    throw Error(ErrorKind::device_lost,
                fmt::format("Vulkan call failed while {}: not finished after {} ms (VK_TIMEOUT); the device is "
                            "treated as lost",
                            doing, fence_timeout_ns_ / 1'000'000));
  }
  check(r, doing);
}

std::shared_ptr<Allocation> Runtime::allocate(VkDeviceSize bytes, bool host_visible) {
  require_alive();
  // maxMemoryAllocationSize is a soft limit: allocations past it may succeed
  // (NVIDIA's do). They are only of use read by device address (a K/V pool
  // past one binding), so they are tried where the device has that, and a
  // driver that refuses one gives out_of_memory.
  if (bytes > caps_.max_allocation_bytes && caps_.max_allocation_bytes && !caps_.buffer_device_address)
    throw Error(ErrorKind::out_of_memory, fmt::format("allocation: expected at most {} bytes (device limit), got {}",
                                                      caps_.max_allocation_bytes, bytes));
  return std::make_shared<Allocation>(*vk_, device_, memory_props_, bytes, host_visible, caps_.buffer_device_address);
}

std::shared_ptr<Allocation> Runtime::take_pooled(Pool& pool, VkDeviceSize bytes) {
  // The smallest free allocation that holds `bytes`, unless it is more than twice as big.
  std::lock_guard lock(scratch_mutex_);
  auto it = pool.lower_bound(bytes);
  if (it == pool.end() || it->first > bytes * 2) return nullptr;
  auto a = std::move(it->second);
  pool.erase(it);
  return a;
}

void Runtime::give_pooled(Pool& pool, std::shared_ptr<Allocation> a) {
  std::lock_guard lock(scratch_mutex_);
  pool.emplace(a->bytes(), std::move(a));
}

std::shared_ptr<Allocation> Runtime::acquire_scratch(VkDeviceSize bytes) {
  if (auto a = take_pooled(free_scratch_, bytes)) return a;
  return allocate(bytes, false);
}

void Runtime::release_scratch(std::shared_ptr<Allocation> a) { give_pooled(free_scratch_, std::move(a)); }

std::shared_ptr<Allocation> Runtime::acquire_zeroed(VkDeviceSize bytes) {
  if (auto a = take_pooled(free_zeroed_, bytes)) return a;
  auto a = allocate(bytes, false);
  std::lock_guard lock(transfer_mutex_);
  run_once([&](VkCommandBuffer cb) { vk_->vkCmdFillBuffer(cb, a->buffer(), 0, VK_WHOLE_SIZE, 0); });
  return a;
}

void Runtime::release_zeroed(std::shared_ptr<Allocation> a) { give_pooled(free_zeroed_, std::move(a)); }

VkBuffer Runtime::placeholder_buffer() {
  std::call_once(placeholder_once_, [&] {
    std::lock_guard lock(transfer_mutex_);
    auto buffer = allocate(64, false);
    run_once([&](VkCommandBuffer cb) { vk_->vkCmdFillBuffer(cb, buffer->buffer(), 0, 64, 0); });
    placeholder_ = std::move(buffer);
  });
  return placeholder_->buffer();
}

Allocation& Runtime::staging(VkDeviceSize bytes) {
  if (!staging_ || staging_->bytes() < bytes) {
    staging_.reset();
    staging_ = allocate(std::max<VkDeviceSize>(bytes, 1 << 20), true);
  }
  return *staging_;
}

VkCommandBuffer Runtime::begin_one_shot() {
  require_alive();
  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = command_pool_;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  VkCommandBuffer cb;
  check(vk_->vkAllocateCommandBuffers(device_, &ai, &cb), "allocating a command buffer");
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  vk_->vkBeginCommandBuffer(cb, &bi);
  // Earlier submissions (recorded attention work) may have written what this
  // copy reads, or still be ordered before what it writes: a fence wait on the
  // host orders execution, this barrier makes their writes visible.
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  vk_->vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0, nullptr, 0,
                       nullptr);
  return cb;
}

void Runtime::end_one_shot(VkCommandBuffer cb) {
  // Device writes become visible to the host (downloads read mapped staging).
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vk_->vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, nullptr, 0,
                       nullptr);
  // The command buffer is freed on every path, failed ones included.
  struct Free {
    Runtime& rt;
    VkCommandBuffer cb;
    ~Free() { rt.vk_->vkFreeCommandBuffers(rt.device_, rt.command_pool_, 1, &cb); }
  } free_cb{*this, cb};
  check(vk_->vkEndCommandBuffer(cb), "ending a command buffer");
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cb;
  submit(si, one_shot_fence_, "submitting a transfer");
  wait_fence(one_shot_fence_, "waiting for a transfer");
}

void Runtime::upload(VkBuffer dst, VkDeviceSize offset, std::span<const std::byte> bytes) {
  if (bytes.empty()) return;
  std::lock_guard lock(transfer_mutex_);
  Allocation& s = staging(bytes.size());
  std::memcpy(s.mapped(), bytes.data(), bytes.size());
  run_once([&](VkCommandBuffer cb) {
    VkBufferCopy copy{0, offset, bytes.size()};
    vk_->vkCmdCopyBuffer(cb, s.buffer(), dst, 1, &copy);
  });
}

void Runtime::download(VkBuffer src, VkDeviceSize offset, std::span<std::byte> bytes) {
  if (bytes.empty()) return;
  std::lock_guard lock(transfer_mutex_);
  Allocation& s = staging(bytes.size());
  run_once([&](VkCommandBuffer cb) {
    VkBufferCopy copy{offset, 0, bytes.size()};
    vk_->vkCmdCopyBuffer(cb, src, s.buffer(), 1, &copy);
  });
  std::memcpy(bytes.data(), s.mapped(), bytes.size());
}

}  // namespace vkattn::vk

namespace vkattn {

uint64_t Context::validation_messages() { return vk::Instance::validation_messages(); }

Context::Context(const ContextOptions& options) : runtime_(std::make_unique<vk::Runtime>(options)) {
  runtime_->set_coop_accumulator_quad(ops::fragment_layout_holds(*this));
}
Context::Context(const ExternalDevice& external) : runtime_(std::make_unique<vk::Runtime>(external)) {
  runtime_->set_coop_accumulator_quad(ops::fragment_layout_holds(*this));
}
Context::~Context() = default;

const DeviceCaps& Context::caps() const { return runtime_->caps(); }
vk::Runtime& Context::runtime() { return *runtime_; }

Tensor Context::tensor(DType dtype, Shape shape) {
  const VkDeviceSize bytes = dtype_storage_bytes(dtype, element_count(shape));
  auto alloc = runtime_->allocate(bytes, false);
  VkBuffer b = alloc->buffer();
  return Tensor(std::move(alloc), b, 0, bytes, dtype, std::move(shape));
}

Tensor Context::wrap(VkBuffer buffer, VkDeviceSize offset, VkDeviceSize bytes, DType dtype, Shape shape) {
  const VkDeviceSize need = dtype_storage_bytes(dtype, element_count(shape));
  if (buffer == VK_NULL_HANDLE) throw Error(ErrorKind::invalid_argument, "buffer: expected a VkBuffer, got null");
  if (bytes < need)
    throw Error(ErrorKind::invalid_argument,
                fmt::format("bytes: expected at least {} for {} {}, got {}", need, to_string(dtype),
                            shape_to_string(shape), bytes));
  const uint32_t align = std::max(4u, caps().min_storage_buffer_offset_alignment);
  if (offset % align)
    throw Error(ErrorKind::invalid_argument,
                fmt::format("offset: expected a multiple of {} (the device's storage-buffer offset alignment), got {}",
                            align, offset));
  return Tensor(nullptr, buffer, offset, bytes, dtype, std::move(shape));
}

void Context::upload(const Tensor& dst, std::span<const std::byte> bytes) {
  if (bytes.size() != dst.bytes())
    throw Error(ErrorKind::invalid_argument,
                fmt::format("upload: expected {} bytes for {} {}, got {}", dst.bytes(), to_string(dst.dtype()),
                            shape_to_string(dst.shape()), bytes.size()));
  runtime_->upload(dst.buffer(), dst.offset(), bytes);
}

void Context::download(const Tensor& src, std::span<std::byte> bytes) {
  if (bytes.size() != src.bytes())
    throw Error(ErrorKind::invalid_argument,
                fmt::format("download: expected {} bytes for {} {}, got {}", src.bytes(), to_string(src.dtype()),
                            shape_to_string(src.shape()), bytes.size()));
  runtime_->download(src.buffer(), src.offset(), bytes);
}

}  // namespace vkattn

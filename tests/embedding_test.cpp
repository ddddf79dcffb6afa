// vkattn inside another runtime: the caller owns the instance, device, queue,
// buffers and command buffer; vkattn wraps the buffers and records into the
// caller's command buffer. And replay: one recording, submitted again after
// the kv_len / start_pos GPU buffers change (decode steps without re-recording).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <vulkan/vulkan.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "expect_error.hpp"
#include "reference/rounding.hpp"
#include "reference/text_reference.hpp"
#include "reference/tolerance.hpp"
#include "test_context.hpp"
#include "vkattn/context.hpp"
#include "vkattn/error.hpp"
#include "vkattn/recorder.hpp"
#include "vkattn/text.hpp"

namespace vkattn {
namespace {

#define VK_OK(expr) ASSERT_EQ((expr), VK_SUCCESS) << #expr

bool validation_requested() {
  const char* v = std::getenv("VKATTN_VALIDATION");
  return v && *v && std::strcmp(v, "0") != 0;
}

uint32_t g_messages = 0;
VKAPI_ATTR VkBool32 VKAPI_CALL count_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                             VkDebugUtilsMessageTypeFlagsEXT,
                                             const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
  if (severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
    ++g_messages;
    ADD_FAILURE() << "validation (caller's instance): " << data->pMessage;
  }
  return VK_FALSE;
}

std::vector<float> random_values(std::mt19937& rng, size_t n, float scale) {
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// The caller's own Vulkan objects, created and destroyed with raw Vulkan.
class Embedding : public ::testing::Test {
 protected:
  struct Buffer {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    void* mapped = nullptr;
    VkDeviceSize bytes = 0;
  };

  void SetUp() override {
    g_messages = 0;
    const bool validation = validation_requested();
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "embedding_test";
    app.apiVersion = VK_API_VERSION_1_3;
    const char* layer = "VK_LAYER_KHRONOS_validation";
    const char* ext = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    VkDebugUtilsMessengerCreateInfoEXT dbg{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    dbg.messageSeverity =
        VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    dbg.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                      VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    dbg.pfnUserCallback = count_message;
    VkInstanceCreateInfo ii{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ii.pApplicationInfo = &app;
    if (validation) {
      ii.enabledLayerCount = 1;
      ii.ppEnabledLayerNames = &layer;
      ii.enabledExtensionCount = 1;
      ii.ppEnabledExtensionNames = &ext;
      ii.pNext = &dbg;
    }
    VK_OK(vkCreateInstance(&ii, nullptr, &instance_));
    if (validation) {
      auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
          vkGetInstanceProcAddr(instance_, "vkCreateDebugUtilsMessengerEXT"));
      ASSERT_NE(create, nullptr);
      VK_OK(create(instance_, &dbg, nullptr, &messenger_));
    }

    // The device the rest of the suite uses ($VKATTN_DEVICE, else auto),
    // chosen by vkattn's own selector over this instance's devices.
    uint32_t n = 0;
    VK_OK(vkEnumeratePhysicalDevices(instance_, &n, nullptr));
    std::vector<VkPhysicalDevice> pds(n);
    VK_OK(vkEnumeratePhysicalDevices(instance_, &n, pds.data()));
    ASSERT_GT(n, 0u);
    const char* selector = std::getenv("VKATTN_DEVICE");
    const uint32_t index = choose_device(list_devices(), selector ? selector : "");
    ASSERT_LT(index, n);
    physical_ = pds[index];
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(physical_, &props);
    limits_ = props.limits;
    uint32_t nq = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(physical_, &nq, nullptr);
    std::vector<VkQueueFamilyProperties> qs(nq);
    vkGetPhysicalDeviceQueueFamilyProperties(physical_, &nq, qs.data());
    family_ = UINT32_MAX;
    for (uint32_t i = 0; i < nq; ++i)
      if (qs[i].queueFlags & VK_QUEUE_COMPUTE_BIT) {
        family_ = i;
        break;
      }
    ASSERT_NE(family_, UINT32_MAX);

    // Enable only what the device has, and tell vkattn exactly that.
    VkPhysicalDeviceVulkan13Features have13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    VkPhysicalDeviceVulkan12Features have12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &have13};
    VkPhysicalDeviceVulkan11Features have11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, &have12};
    VkPhysicalDeviceFeatures2 have{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &have11};
    vkGetPhysicalDeviceFeatures2(physical_, &have);
    VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    f13.subgroupSizeControl = have13.subgroupSizeControl;
    f13.computeFullSubgroups = have13.computeFullSubgroups;
    VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &f13};
    f12.shaderFloat16 = have12.shaderFloat16;
    VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, &f12};
    f11.storageBuffer16BitAccess = have11.storageBuffer16BitAccess;
    VkPhysicalDeviceFeatures2 feats{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f11};
    const float priority = 1.0f;
    VkDeviceQueueCreateInfo qi{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    qi.queueFamilyIndex = family_;
    qi.queueCount = 1;
    qi.pQueuePriorities = &priority;
    VkDeviceCreateInfo di{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &feats};
    di.queueCreateInfoCount = 1;
    di.pQueueCreateInfos = &qi;
    VK_OK(vkCreateDevice(physical_, &di, nullptr, &device_));
    vkGetDeviceQueue(device_, family_, 0, &queue_);

    external_.instance = instance_;
    external_.physical_device = physical_;
    external_.device = device_;
    external_.queue = queue_;
    external_.queue_family = family_;
    external_.storage_16bit_enabled = f11.storageBuffer16BitAccess;
    external_.shader_float16_enabled = f12.shaderFloat16;
    external_.subgroup_size_control_enabled = f13.subgroupSizeControl && f13.computeFullSubgroups;

    VkCommandPoolCreateInfo pi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pi.queueFamilyIndex = family_;
    VK_OK(vkCreateCommandPool(device_, &pi, nullptr, &pool_));
    VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VK_OK(vkCreateFence(device_, &fi, nullptr, &fence_));
  }

  void TearDown() override {
    if (device_) vkDeviceWaitIdle(device_);
    for (auto& b : buffers_) {
      vkDestroyBuffer(device_, b.buffer, nullptr);
      vkFreeMemory(device_, b.memory, nullptr);
    }
    if (fence_) vkDestroyFence(device_, fence_, nullptr);
    if (pool_) vkDestroyCommandPool(device_, pool_, nullptr);
    if (device_) vkDestroyDevice(device_, nullptr);
    if (messenger_) {
      auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
          vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
      destroy(instance_, messenger_, nullptr);
    }
    if (instance_) vkDestroyInstance(instance_, nullptr);
    EXPECT_EQ(g_messages, 0u) << "the validation layer reported messages on the caller's instance";
  }

  // A host-visible, coherent, mapped buffer of the caller's.
  Buffer& make_buffer(VkDeviceSize bytes) {
    Buffer b;
    b.bytes = bytes;
    VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bi.size = bytes;
    bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    EXPECT_EQ(vkCreateBuffer(device_, &bi, nullptr, &b.buffer), VK_SUCCESS);
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(device_, b.buffer, &req);
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(physical_, &mp);
    const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    uint32_t type = UINT32_MAX;
    for (uint32_t i = 0; i < mp.memoryTypeCount && type == UINT32_MAX; ++i)
      if ((req.memoryTypeBits & (1u << i)) && (mp.memoryTypes[i].propertyFlags & want) == want) type = i;
    EXPECT_NE(type, UINT32_MAX);
    VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    ai.allocationSize = req.size;
    ai.memoryTypeIndex = type;
    EXPECT_EQ(vkAllocateMemory(device_, &ai, nullptr, &b.memory), VK_SUCCESS);
    EXPECT_EQ(vkBindBufferMemory(device_, b.buffer, b.memory, 0), VK_SUCCESS);
    EXPECT_EQ(vkMapMemory(device_, b.memory, 0, VK_WHOLE_SIZE, 0, &b.mapped), VK_SUCCESS);
    buffers_.push_back(b);
    return buffers_.back();
  }

  VkDeviceSize align(VkDeviceSize x) const {
    const VkDeviceSize a = std::max<VkDeviceSize>(limits_.minStorageBufferOffsetAlignment, 16);
    return (x + a - 1) / a * a;
  }

  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkPhysicalDeviceLimits limits_{};
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t family_ = 0;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  std::deque<Buffer> buffers_;  // references stay valid as it grows
  ExternalDevice external_;
};

TEST_F(Embedding, CallerDeviceBuffersAndCommandBuffer) {
  // Two calls in the caller's command buffer: a GQA decode over f16 KV with a
  // batch of different lengths, and a causal f32 prefill.
  TextAttentionParams dec;
  dec.batch = 2;
  dec.num_heads = 8;
  dec.num_kv_heads = 2;
  dec.head_dim = 64;
  dec.kv_capacity = 48;
  dec.kv_len = {48, 29};
  dec.start_pos = {47, 28};
  dec.causal = true;
  TextAttentionParams pre;
  pre.seq_len = 12;
  pre.num_heads = 4;
  pre.num_kv_heads = 4;
  pre.head_dim = 32;
  pre.kv_capacity = 20;
  pre.kv_len = {20};
  pre.start_pos = {8};
  pre.causal = true;

  std::mt19937 rng(7);
  const size_t dq = 2 * 1 * 8 * 64, dkv = 2 * 48 * 2 * 64;
  const size_t pq = 12 * 4 * 32, pkv = 20 * 4 * 32;
  std::vector<float> q1 = random_values(rng, dq, 2.0f), k1 = random_values(rng, dkv, 1.0f),
                     v1 = random_values(rng, dkv, 1.0f);
  reference::round_to(DType::f16, k1);
  reference::round_to(DType::f16, v1);
  std::vector<float> q2 = random_values(rng, pq, 1.5f), k2 = random_values(rng, pkv, 1.0f),
                     v2 = random_values(rng, pkv, 1.0f);

  // The decode's Q, K, V and output share one buffer at aligned offsets.
  const VkDeviceSize oq = 0, ok = align(oq + dq * 4), ov = align(ok + dkv * 2), oo = align(ov + dkv * 2);
  Buffer& shared = make_buffer(oo + dq * 4);
  auto* base = static_cast<std::byte*>(shared.mapped);
  std::memcpy(base + oq, q1.data(), dq * 4);
  for (size_t i = 0; i < dkv; ++i) {
    const uint16_t kb = reference::float_to_f16(k1[i]), vb = reference::float_to_f16(v1[i]);
    std::memcpy(base + ok + 2 * i, &kb, 2);
    std::memcpy(base + ov + 2 * i, &vb, 2);
  }
  std::memset(base + oo, 0xff, dq * 4);  // NaN: every output element must be written
  Buffer& bq = make_buffer(pq * 4);
  Buffer& bk = make_buffer(pkv * 4);
  Buffer& bv = make_buffer(pkv * 4);
  Buffer& bo = make_buffer(pq * 4);
  std::memcpy(bq.mapped, q2.data(), pq * 4);
  std::memcpy(bk.mapped, k2.data(), pkv * 4);
  std::memcpy(bv.mapped, v2.data(), pkv * 4);
  std::memset(bo.mapped, 0xff, pq * 4);

  {
    Context ctx(external_);
    EXPECT_EQ(ctx.caps().subgroup_size_control, external_.subgroup_size_control_enabled);
    EXPECT_EQ(ctx.caps().storage_16bit, external_.storage_16bit_enabled);
    EXPECT_FALSE(ctx.caps().pipeline_executable_info);  // the host did not enable it
    TextAttentionTensors t1;
    t1.q = ctx.wrap(shared.buffer, oq, dq * 4, DType::f32, {2, 1, 8, 64});
    t1.k = ctx.wrap(shared.buffer, ok, dkv * 2, DType::f16, {2, 48, 2, 64});
    t1.v = ctx.wrap(shared.buffer, ov, dkv * 2, DType::f16, {2, 48, 2, 64});
    t1.out = ctx.wrap(shared.buffer, oo, dq * 4, DType::f32, {2, 1, 8, 64});
    TextAttentionTensors t2;
    t2.q = ctx.wrap(bq.buffer, 0, bq.bytes, DType::f32, {1, 12, 4, 32});
    t2.k = ctx.wrap(bk.buffer, 0, bk.bytes, DType::f32, {1, 20, 4, 32});
    t2.v = ctx.wrap(bv.buffer, 0, bv.bytes, DType::f32, {1, 20, 4, 32});
    t2.out = ctx.wrap(bo.buffer, 0, bo.bytes, DType::f32, {1, 12, 4, 32});

    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = pool_;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    VkCommandBuffer cb;
    VK_OK(vkAllocateCommandBuffers(device_, &ai, &cb));
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    VK_OK(vkBeginCommandBuffer(cb, &bi));
    {
      Recorder rec(ctx, cb);
      TextCallInfo i1 = text_attention(rec, dec, t1);
      TextCallInfo i2 = text_attention(rec, pre, t2);
      EXPECT_THAT(i1.variant, ::testing::StartsWith("decode_"));
      EXPECT_THAT(i2.variant, ::testing::StartsWith("prefill_"));
      EXPECT_THROW(rec.submit(), Error);  // the caller submits its own command buffer
      // The caller's own barrier before reading results on the host.
      VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
      mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
      mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
      vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0,
                           nullptr, 0, nullptr);
      VK_OK(vkEndCommandBuffer(cb));
      VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
      si.commandBufferCount = 1;
      si.pCommandBuffers = &cb;
      VK_OK(vkQueueSubmit(queue_, 1, &si, fence_));
      VK_OK(vkWaitForFences(device_, 1, &fence_, VK_TRUE, UINT64_MAX));
    }  // the recorder (its descriptor sets) outlives the work
    vkFreeCommandBuffers(device_, pool_, 1, &cb);
  }  // the context goes before the caller's device

  std::vector<float> got1(dq), got2(pq);
  std::memcpy(got1.data(), base + oo, dq * 4);
  std::memcpy(got2.data(), bo.mapped, pq * 4);
  const auto tol1 = reference::tolerance_for(DType::f32, DType::f16, DType::f32);
  const auto r1 = reference::compare(got1, reference::text_attention(dec, q1, k1, v1), tol1);
  EXPECT_TRUE(r1.passed) << "decode: " << reference::to_string(r1, tol1);
  const auto tol2 = reference::tolerance_for(DType::f32, DType::f32, DType::f32);
  const auto r2 = reference::compare(got2, reference::text_attention(pre, q2, k2, v2), tol2);
  EXPECT_TRUE(r2.passed) << "prefill: " << reference::to_string(r2, tol2);
  EXPECT_GT(r1.max_ref, 0.1);
  EXPECT_GT(r2.max_ref, 0.1);
  // The buffer's bytes around the wrapped ranges are untouched.
  EXPECT_EQ(std::memcmp(base + oq, q1.data(), dq * 4), 0);
}

TEST_F(Embedding, NullHandlesAreRejected) {
  ExternalDevice e = external_;
  e.queue = VK_NULL_HANDLE;
  try {
    Context ctx(e);
    ADD_FAILURE() << "expected an Error";
  } catch (const Error& err) {
    EXPECT_EQ(err.kind(), ErrorKind::invalid_argument);
    EXPECT_THAT(err.what(), ::testing::HasSubstr("external device"));
  }
  Context ctx(external_);
  EXPECT_THROW(Recorder(ctx, VK_NULL_HANDLE), Error);
}

// One text-attention call whose answer is known: every score equal, so each
// output is V's mean (2). `before_run` is called after the uploads and recording.
std::vector<float> equal_scores_call(Context& ctx, const std::function<void()>& before_run = [] {}) {
  TextAttentionParams p;
  p.head_dim = 16;
  p.kv_capacity = 4;
  p.kv_len = {4};
  TextAttentionTensors t;
  t.q = ctx.tensor(DType::f32, {1, 1, 1, 16});
  t.k = ctx.tensor(DType::f32, {1, 4, 1, 16});
  t.v = ctx.tensor(DType::f32, {1, 4, 1, 16});
  t.out = ctx.tensor(DType::f32, {1, 1, 1, 16});
  ctx.upload(t.q, std::vector<float>(16, 0.5f));
  ctx.upload(t.k, std::vector<float>(64, 1.0f));
  ctx.upload(t.v, std::vector<float>(64, 2.0f));
  Recorder rec(ctx);
  text_attention(rec, p, t);
  before_run();
  rec.run();
  return ctx.download_as<float>(t.out);
}

std::atomic<int> g_host_lookups{0};
VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL host_get_instance_proc_addr(VkInstance instance, const char* name) {
  ++g_host_lookups;
  return ::vkGetInstanceProcAddr(instance, name);
}

VKAPI_ATTR VkResult VKAPI_CALL other_create_instance(const VkInstanceCreateInfo*, const VkAllocationCallbacks*,
                                                     VkInstance*) {
  return VK_ERROR_INITIALIZATION_FAILED;
}
// A loader other than the one in use: its vkCreateInstance differs.
VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL other_get_instance_proc_addr(VkInstance instance, const char* name) {
  if (std::strcmp(name, "vkCreateInstance") == 0) return reinterpret_cast<PFN_vkVoidFunction>(other_create_instance);
  return ::vkGetInstanceProcAddr(instance, name);
}

// A host that loads Vulkan its own way hands vkattn its vkGetInstanceProcAddr.
// With no loader for vkattn to open, only the host's can serve; in a process
// where vkattn already runs, the host's loader must be the same one.
TEST_F(Embedding, HostLoaderResolvesTheEntryPoints) {
  ExternalDevice e = external_;
  e.get_instance_proc_addr = host_get_instance_proc_addr;
  setenv("VKATTN_VULKAN_LIBRARY", "/nonexistent/libvulkan.so.1", 1);
  {
    Context ctx(e);
    EXPECT_EQ(equal_scores_call(ctx), std::vector<float>(16, 2.0f));
  }
  unsetenv("VKATTN_VULKAN_LIBRARY");
  EXPECT_GT(g_host_lookups.load(), 0);
  e.get_instance_proc_addr = other_get_instance_proc_addr;
  const Error err = testing::expect_error([&] { Context ctx(e); });
  EXPECT_EQ(err.kind(), ErrorKind::invalid_argument);
  EXPECT_THAT(err.what(), ::testing::HasSubstr("get_instance_proc_addr: expected the Vulkan loader this process's "
                                               "first vkattn context uses (one loader per process)"));
}

// A host that shares its queue: vkattn takes the host's lock around each
// submit (uploads, downloads, recorded work), and never holds it otherwise.
TEST_F(Embedding, HostQueueLockWrapsEverySubmit) {
  std::mutex host_queue;
  int locks = 0, unlocks = 0;
  ExternalDevice e = external_;
  e.lock_queue = [&] {
    host_queue.lock();
    ++locks;
  };
  e.unlock_queue = [&] {
    ++unlocks;
    host_queue.unlock();
  };
  {
    Context ctx(e);
    int before_run = 0;
    EXPECT_EQ(equal_scores_call(ctx, [&] {
                EXPECT_GE(locks, 3);  // one per upload (and the first recording's zeroed placeholder)
                before_run = locks;
              }),
              std::vector<float>(16, 2.0f));
    EXPECT_EQ(locks, before_run + 2);  // the run and the download
    EXPECT_TRUE(host_queue.try_lock()) << "the host's lock must be free between calls";
    host_queue.unlock();
  }
  EXPECT_EQ(locks, unlocks);
  ExternalDevice half = external_;
  half.lock_queue = [] {};
  const Error err = testing::expect_error([&] { Context ctx(half); });
  EXPECT_EQ(err.kind(), ErrorKind::invalid_argument);
  EXPECT_THAT(err.what(), ::testing::HasSubstr("expected lock_queue and unlock_queue both set or both unset, got "
                                               "lock_queue only"));
}

// Replay: one recording, submitted per decode step with new lengths on the GPU.
class EmbeddingReplay : public testing::GpuTest {};

TEST_F(EmbeddingReplay, SubmitAgainAfterKvLenBufferChanges) {
  TextAttentionParams p;
  p.batch = 2;
  p.num_heads = 4;
  p.num_kv_heads = 2;
  p.head_dim = 64;
  p.kv_capacity = 40;
  p.kv_len = {40};  // host values: the upper bound (validated; a planning hint)
  p.start_pos = {39};
  p.causal = true;
  std::mt19937 rng(11);
  const size_t nq = 2 * 4 * 64, nkv = 2 * 40 * 2 * 64;
  std::vector<float> q = random_values(rng, nq, 2.0f), k = random_values(rng, nkv, 1.0f),
                     v = random_values(rng, nkv, 1.0f);
  Context& c = ctx();
  TextAttentionTensors t;
  t.q = c.tensor(DType::f32, {2, 1, 4, 64});
  t.k = c.tensor(DType::f32, {2, 40, 2, 64});
  t.v = c.tensor(DType::f32, {2, 40, 2, 64});
  t.out = c.tensor(DType::f32, {2, 1, 4, 64});
  t.kv_len = c.tensor(DType::u32, {2});
  t.start_pos = c.tensor(DType::u32, {2});
  c.upload(t.q, q);
  c.upload(t.k, k);
  c.upload(t.v, v);

  Recorder rec(c);
  text_attention(rec, p, t);
  const std::vector<std::vector<uint32_t>> steps = {{20, 33}, {21, 34}, {5, 40}};
  std::vector<float> previous;
  for (const auto& lens : steps) {
    c.upload(t.kv_len, lens);
    c.upload(t.start_pos, std::vector<uint32_t>{lens[0] - 1, lens[1] - 1});
    rec.run();  // the same command buffer, replayed
    std::vector<float> got = c.download_as<float>(t.out);
    TextAttentionParams step = p;
    step.kv_len = lens;
    step.start_pos = {lens[0] - 1, lens[1] - 1};
    const auto tol = reference::tolerance_for(DType::f32, DType::f32, DType::f32);
    const auto r = reference::compare(got, reference::text_attention(step, q, k, v), tol);
    EXPECT_TRUE(r.passed) << "kv_len " << lens[0] << "," << lens[1] << ": " << reference::to_string(r, tol);
    EXPECT_NE(got, previous) << "the replay did not see the new lengths";
    previous = got;
  }
}

}  // namespace
}  // namespace vkattn

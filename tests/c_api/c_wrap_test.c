/* Caller-owned Vulkan memory wrapped as tensors, from C, end to end: the
 * program creates its own instance, device and buffers, hands them to vkattn
 * with its own loader's vkGetInstanceProcAddr (vkattn_context_create_external),
 * wraps ranges of its buffers (vkattn_tensor_wrap), records text attention
 * into its own command buffer (vkattn_recorder_create_external), submits it
 * itself and reads the output from its mapped memory, judged by the float64
 * oracle. The program links libvulkan too: vkattn's own entry points must not
 * take the place of the loader's (cmake/SymbolTest.cmake). Exit status 0 when
 * every check passes. */
#include <stdlib.h>
#include <string.h>
#include <vulkan/vulkan.h>

#include "c_check.h"
#include "c_oracle.h"
#include "vkattn/vkattn.h"

#define VK_CHECK(call) CHECK((call) == VK_SUCCESS, "%s", #call)

static int validation_messages = 0;

static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                 VkDebugUtilsMessageTypeFlagsEXT type,
                                                 const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
  (void)severity, (void)type, (void)user;
  fprintf(stderr, "validation: %s\n", data->pMessage);
  ++validation_messages;
  return VK_FALSE;
}

/* The host's loader as vkattn sees it: every lookup passes through to the
 * loader this program links, except that vkCmdDispatch is counted, to show
 * that vkattn records through the device-level table it loaded for the
 * host's device (vkGetDeviceProcAddr on that device). */
static PFN_vkGetDeviceProcAddr real_get_device_proc_addr;
static PFN_vkCmdDispatch real_cmd_dispatch;
static VkDevice dispatch_resolved_for = VK_NULL_HANDLE;
static int dispatches = 0;

static VKAPI_ATTR void VKAPI_CALL counted_cmd_dispatch(VkCommandBuffer cb, uint32_t x, uint32_t y, uint32_t z) {
  ++dispatches;
  real_cmd_dispatch(cb, x, y, z);
}

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL host_get_device_proc_addr(VkDevice device, const char* name) {
  PFN_vkVoidFunction f = real_get_device_proc_addr(device, name);
  if (!f || strcmp(name, "vkCmdDispatch") != 0) return f;
  dispatch_resolved_for = device;
  real_cmd_dispatch = (PFN_vkCmdDispatch)f;
  return (PFN_vkVoidFunction)counted_cmd_dispatch;
}

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL host_get_instance_proc_addr(VkInstance instance, const char* name) {
  PFN_vkVoidFunction f = vkGetInstanceProcAddr(instance, name);
  if (!f || strcmp(name, "vkGetDeviceProcAddr") != 0) return f;
  real_get_device_proc_addr = (PFN_vkGetDeviceProcAddr)f;
  return (PFN_vkVoidFunction)host_get_device_proc_addr;
}

/* The host's Vulkan objects: what a runtime embedding vkattn already has. */
typedef struct host {
  VkInstance instance;
  VkDebugUtilsMessengerEXT messenger;
  VkPhysicalDevice physical;
  VkDevice device;
  VkQueue queue;
  uint32_t family;
  VkPhysicalDeviceMemoryProperties memory;
} host;

typedef struct host_buffer {
  VkBuffer buffer;
  VkDeviceMemory memory;
  unsigned char* mapped;
  VkDeviceSize bytes;
} host_buffer;

static int host_create(host* h) {
  const char* env = getenv("VKATTN_VALIDATION");
  const int validation = env && strcmp(env, "1") == 0;
  const char* layer = "VK_LAYER_KHRONOS_validation";
  const char* extension = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
  VkApplicationInfo app = {VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "c_wrap_test";
  app.apiVersion = VK_API_VERSION_1_3;
  VkDebugUtilsMessengerCreateInfoEXT dbg = {VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  dbg.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  dbg.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT;
  dbg.pfnUserCallback = on_message;
  VkInstanceCreateInfo ii = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ii.pApplicationInfo = &app;
  if (validation) {
    ii.pNext = &dbg;
    ii.enabledLayerCount = 1;
    ii.ppEnabledLayerNames = &layer;
    ii.enabledExtensionCount = 1;
    ii.ppEnabledExtensionNames = &extension;
  }
  if (vkCreateInstance(&ii, NULL, &h->instance) != VK_SUCCESS) return 0;
  if (validation) {
    PFN_vkCreateDebugUtilsMessengerEXT create =
        (PFN_vkCreateDebugUtilsMessengerEXT)vkGetInstanceProcAddr(h->instance, "vkCreateDebugUtilsMessengerEXT");
    VK_CHECK(create(h->instance, &dbg, NULL, &h->messenger));
  }
  uint32_t n = 1;
  VkResult r = vkEnumeratePhysicalDevices(h->instance, &n, &h->physical); /* the first device */
  if ((r != VK_SUCCESS && r != VK_INCOMPLETE) || n == 0) return 0;
  VkQueueFamilyProperties families[16];
  uint32_t nf = 16;
  vkGetPhysicalDeviceQueueFamilyProperties(h->physical, &nf, families);
  h->family = UINT32_MAX;
  for (uint32_t i = 0; i < nf && h->family == UINT32_MAX; ++i)
    if (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) h->family = i;
  if (h->family == UINT32_MAX) return 0;
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo qi = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qi.queueFamilyIndex = h->family;
  qi.queueCount = 1;
  qi.pQueuePriorities = &priority;
  VkDeviceCreateInfo di = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO}; /* no optional features: f32 kernels only */
  di.queueCreateInfoCount = 1;
  di.pQueueCreateInfos = &qi;
  if (vkCreateDevice(h->physical, &di, NULL, &h->device) != VK_SUCCESS) return 0;
  vkGetDeviceQueue(h->device, h->family, 0, &h->queue);
  vkGetPhysicalDeviceMemoryProperties(h->physical, &h->memory);
  return 1;
}

static void host_destroy(host* h) {
  if (h->device) vkDestroyDevice(h->device, NULL);
  if (h->messenger) {
    PFN_vkDestroyDebugUtilsMessengerEXT destroy =
        (PFN_vkDestroyDebugUtilsMessengerEXT)vkGetInstanceProcAddr(h->instance, "vkDestroyDebugUtilsMessengerEXT");
    destroy(h->instance, h->messenger, NULL);
  }
  if (h->instance) vkDestroyInstance(h->instance, NULL);
}

/* A host-visible, coherent storage buffer, mapped. */
static host_buffer buffer_create(const host* h, VkDeviceSize bytes) {
  host_buffer b = {VK_NULL_HANDLE, VK_NULL_HANDLE, NULL, bytes};
  VkBufferCreateInfo bi = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bi.size = bytes;
  bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  VK_CHECK(vkCreateBuffer(h->device, &bi, NULL, &b.buffer));
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(h->device, b.buffer, &req);
  const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  VkMemoryAllocateInfo ai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = UINT32_MAX;
  for (uint32_t i = 0; i < h->memory.memoryTypeCount && ai.memoryTypeIndex == UINT32_MAX; ++i)
    if ((req.memoryTypeBits & (1u << i)) && (h->memory.memoryTypes[i].propertyFlags & want) == want)
      ai.memoryTypeIndex = i;
  CHECK(ai.memoryTypeIndex != UINT32_MAX, "expected a host-visible coherent memory type");
  VK_CHECK(vkAllocateMemory(h->device, &ai, NULL, &b.memory));
  VK_CHECK(vkBindBufferMemory(h->device, b.buffer, b.memory, 0));
  VK_CHECK(vkMapMemory(h->device, b.memory, 0, VK_WHOLE_SIZE, 0, (void**)&b.mapped));
  return b;
}

static void buffer_destroy(const host* h, host_buffer* b) {
  vkDestroyBuffer(h->device, b->buffer, NULL);
  vkFreeMemory(h->device, b->memory, NULL);
}

/* Records `p` on the wrapped tensors into the host's command buffer, with the
 * host's own barrier before it reads the output, and runs it to completion. */
static void run_on_host_queue(const host* h, vkattn_context ctx, const vkattn_text_params* p,
                              const vkattn_text_tensors* t) {
  VkCommandPoolCreateInfo pi = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pi.queueFamilyIndex = h->family;
  VkCommandPool pool;
  VK_CHECK(vkCreateCommandPool(h->device, &pi, NULL, &pool));
  VkCommandBufferAllocateInfo ai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = pool;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  VkCommandBuffer cb;
  VK_CHECK(vkAllocateCommandBuffers(h->device, &ai, &cb));
  VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  VK_CHECK(vkBeginCommandBuffer(cb, &bi));

  vkattn_recorder rec = NULL;
  CHECK_OK(vkattn_recorder_create_external(ctx, cb, &rec));
  vkattn_call_info info;
  CHECK_OK(vkattn_text_attention(rec, p, t, NULL, &info));
  CHECK(vkattn_recorder_submit(rec) != VKATTN_OK, "the host submits its own command buffer");
  printf("variant %s\n", info.variant);
  VkMemoryBarrier mb = {VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, NULL, 0,
                       NULL);
  VK_CHECK(vkEndCommandBuffer(cb));
  VkFenceCreateInfo fi = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence fence;
  VK_CHECK(vkCreateFence(h->device, &fi, NULL, &fence));
  VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cb;
  VK_CHECK(vkQueueSubmit(h->queue, 1, &si, fence));
  VK_CHECK(vkWaitForFences(h->device, 1, &fence, VK_TRUE, UINT64_MAX));
  vkattn_recorder_destroy(rec); /* after the work: it holds the descriptor sets */
  vkDestroyFence(h->device, fence, NULL);
  vkDestroyCommandPool(h->device, pool, NULL);
}

static void wrapped_text(const host* h, vkattn_context ctx) {
  c_text_case c = c_text_case_make();
  const vkattn_text_params p = c.params;
  const size_t bq = c.nq * sizeof(float), bk = c.nk * sizeof(float);

  /* Q, K and V in one buffer at offsets past a 256-byte header (a multiple of
   * every device's storage-buffer offset alignment); the output in a second
   * buffer between two guard bands the kernel must leave alone. */
  const VkDeviceSize oq = 256, ok = oq + bq, ov = ok + bk, oo = 256;
  host_buffer in = buffer_create(h, ov + bk), out = buffer_create(h, oo + bq + 256);
  if (!in.mapped || !out.mapped) return;
  memcpy(in.mapped + oq, c.q, bq);
  memcpy(in.mapped + ok, c.k, bk);
  memcpy(in.mapped + ov, c.v, bk);
  memset(out.mapped, 0x5a, out.bytes);

  vkattn_text_tensors t = {0};
  CHECK_OK(vkattn_tensor_wrap(ctx, in.buffer, oq, bq, VKATTN_F32, c.q_shape, 4, &t.q));
  CHECK_OK(vkattn_tensor_wrap(ctx, in.buffer, ok, bk, VKATTN_F32, c.kv_shape, 4, &t.k));
  CHECK_OK(vkattn_tensor_wrap(ctx, in.buffer, ov, bk, VKATTN_F32, c.kv_shape, 4, &t.v));
  CHECK_OK(vkattn_tensor_wrap(ctx, out.buffer, oo, bq, VKATTN_F32, c.q_shape, 4, &t.out));
  CHECK(vkattn_tensor_bytes(t.out) == bq, "wrapped output: %zu bytes", vkattn_tensor_bytes(t.out));
  if (t.q && t.k && t.v && t.out) {
    run_on_host_queue(h, ctx, &p, &t);
    CHECK(dispatch_resolved_for == h->device && dispatches > 0,
          "expected the dispatches through vkCmdDispatch resolved for the host's device, got %d", dispatches);
    check_error("wrapped", c_oracle_text_error(&p, c.q, c.k, c.v, NULL, NULL, (const float*)(out.mapped + oo)));
    int guards_intact = 1;
    for (VkDeviceSize i = 0; i < out.bytes; ++i)
      if ((i < oo || i >= oo + bq) && out.mapped[i] != 0x5a) guards_intact = 0;
    CHECK(guards_intact, "expected the bytes around the wrapped output untouched");
  }

  /* A range smaller than its shape is refused, naming the parameter. */
  vkattn_tensor small = NULL;
  CHECK(vkattn_tensor_wrap(ctx, out.buffer, oo, bq - 4, VKATTN_F32, c.q_shape, 4, &small) == VKATTN_INVALID_ARGUMENT &&
            small == NULL,
        "a range of %zu bytes for %zu", (size_t)(bq - 4), bq);
  CHECK(strstr(vkattn_last_error(), "bytes") != NULL, "message: %s", vkattn_last_error());

  vkattn_tensor_destroy(t.q);
  vkattn_tensor_destroy(t.k);
  vkattn_tensor_destroy(t.v);
  vkattn_tensor_destroy(t.out);
  buffer_destroy(h, &in);
  buffer_destroy(h, &out);
  c_text_case_free(&c);
}

int main(void) {
  host h;
  memset(&h, 0, sizeof h);
  if (!host_create(&h)) {
    fprintf(stderr, "c_wrap_test: expected a Vulkan device to create, got none\n");
    host_destroy(&h);
    return 1;
  }
  vkattn_external_device e;
  memset(&e, 0, sizeof e);
  e.instance = h.instance;
  e.physical_device = h.physical;
  e.device = h.device;
  e.queue = h.queue;
  e.queue_family = h.family;
  e.get_instance_proc_addr = host_get_instance_proc_addr;
  vkattn_context ctx = NULL;
  CHECK_OK(vkattn_context_create_external(&e, &ctx));
  if (ctx) {
    wrapped_text(&h, ctx);
    vkattn_context_destroy(ctx); /* before the host's device */
  }
  host_destroy(&h);
  CHECK(validation_messages == 0, "expected no validation message, got %d", validation_messages);
  printf("%s\n", c_check_failures ? "FAILED" : "all checks passed");
  return c_check_failures ? 1 : 0;
}

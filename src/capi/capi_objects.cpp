// The C API's objects: version, devices, contexts, tensors, recorders.
#include <vector>

#include "capi/capi_support.hpp"
#include "vkattn/version.hpp"

using vkattn::capi::guarded;
using vkattn::capi::require;

extern "C" {

const char* vkattn_version(void) { return vkattn::version().data(); }

vkattn_status vkattn_list_devices(vkattn_device_info* devices, uint32_t capacity, uint32_t* count) {
  return guarded([&] {
    require(count, "count");
    if (capacity) require(devices, "devices");
    const auto list = vkattn::list_devices();
    *count = static_cast<uint32_t>(list.size());
    for (uint32_t i = 0; i < list.size() && i < capacity; ++i)
      vkattn::capi::fill_device_info(devices[i], list[i].index, list[i].caps);
  });
}

vkattn_status vkattn_context_create(const vkattn_context_options* options, vkattn_context* out) {
  return guarded([&] {
    require(out, "out");
    vkattn::ContextOptions o;
    if (options) {
      if (options->device) o.device = options->device;
      o.validation = options->validation;
    }
    *out = new vkattn_context_t{std::make_unique<vkattn::Context>(o)};
  });
}

vkattn_status vkattn_context_create_external(const vkattn_external_device* device, vkattn_context* out) {
  return guarded([&] {
    require(device, "device");
    require(out, "out");
    vkattn::ExternalDevice e;
    e.instance = device->instance;
    e.physical_device = device->physical_device;
    e.device = device->device;
    e.queue = device->queue;
    e.queue_family = device->queue_family;
    e.shader_float16_enabled = device->shader_float16_enabled;
    e.storage_16bit_enabled = device->storage_16bit_enabled;
    e.storage_8bit_enabled = device->storage_8bit_enabled;
    e.shader_int8_enabled = device->shader_int8_enabled;
    e.subgroup_size_control_enabled = device->subgroup_size_control_enabled;
    e.cooperative_matrix_nv_enabled = device->cooperative_matrix_nv_enabled;
    e.get_instance_proc_addr = device->get_instance_proc_addr;
    void* user = device->queue_lock_user;
    if (auto lock = device->lock_queue) e.lock_queue = [lock, user] { lock(user); };
    if (auto unlock = device->unlock_queue) e.unlock_queue = [unlock, user] { unlock(user); };
    *out = new vkattn_context_t{std::make_unique<vkattn::Context>(e)};
  });
}

void vkattn_context_destroy(vkattn_context ctx) { delete ctx; }

vkattn_status vkattn_context_device(vkattn_context ctx, vkattn_device_info* info) {
  return guarded([&] {
    require(ctx, "ctx");
    require(info, "info");
    vkattn::capi::fill_device_info(*info, 0, ctx->context->caps());
  });
}

vkattn_status vkattn_tensor_create(vkattn_context ctx, vkattn_dtype dtype, const uint64_t* shape, uint32_t rank,
                                   vkattn_tensor* out) {
  return guarded([&] {
    require(ctx, "ctx");
    require(out, "out");
    if (rank) require(shape, "shape");
    auto t = ctx->context->tensor(vkattn::capi::dtype_of(dtype, "dtype"), vkattn::Shape(shape, shape + rank));
    *out = new vkattn_tensor_t{std::move(t)};
  });
}

vkattn_status vkattn_tensor_wrap(vkattn_context ctx, VkBuffer buffer, VkDeviceSize offset, VkDeviceSize bytes,
                                 vkattn_dtype dtype, const uint64_t* shape, uint32_t rank, vkattn_tensor* out) {
  return guarded([&] {
    require(ctx, "ctx");
    require(out, "out");
    if (rank) require(shape, "shape");
    auto t = ctx->context->wrap(buffer, offset, bytes, vkattn::capi::dtype_of(dtype, "dtype"),
                                vkattn::Shape(shape, shape + rank));
    *out = new vkattn_tensor_t{std::move(t)};
  });
}

void vkattn_tensor_destroy(vkattn_tensor tensor) { delete tensor; }

size_t vkattn_tensor_bytes(vkattn_tensor tensor) { return tensor ? tensor->tensor.bytes() : 0; }

vkattn_status vkattn_upload(vkattn_context ctx, vkattn_tensor dst, const void* data, size_t bytes) {
  return guarded([&] {
    require(ctx, "ctx");
    require(dst, "dst");
    if (bytes) require(data, "data");
    ctx->context->upload(dst->tensor, {static_cast<const std::byte*>(data), bytes});
  });
}

vkattn_status vkattn_download(vkattn_context ctx, vkattn_tensor src, void* data, size_t bytes) {
  return guarded([&] {
    require(ctx, "ctx");
    require(src, "src");
    if (bytes) require(data, "data");
    ctx->context->download(src->tensor, {static_cast<std::byte*>(data), bytes});
  });
}

vkattn_status vkattn_recorder_create(vkattn_context ctx, vkattn_recorder* out) {
  return guarded([&] {
    require(ctx, "ctx");
    require(out, "out");
    *out = new vkattn_recorder_t{std::make_unique<vkattn::Recorder>(*ctx->context)};
  });
}

vkattn_status vkattn_recorder_create_external(vkattn_context ctx, VkCommandBuffer command_buffer,
                                              vkattn_recorder* out) {
  return guarded([&] {
    require(ctx, "ctx");
    require(out, "out");
    *out = new vkattn_recorder_t{std::make_unique<vkattn::Recorder>(*ctx->context, command_buffer)};
  });
}

void vkattn_recorder_destroy(vkattn_recorder rec) { delete rec; }

#define VKATTN_RECORDER_CALL(name)                 \
  vkattn_status vkattn_recorder_##name(vkattn_recorder rec) { \
    return guarded([&] {                           \
      require(rec, "rec");                         \
      rec->recorder->name();                       \
    });                                            \
  }
VKATTN_RECORDER_CALL(submit)
VKATTN_RECORDER_CALL(wait)
VKATTN_RECORDER_CALL(run)
VKATTN_RECORDER_CALL(reset)
#undef VKATTN_RECORDER_CALL

}  // extern "C"

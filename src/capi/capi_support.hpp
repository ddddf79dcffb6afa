// What the C API's files share: the handle types behind the opaque pointers,
// the exception-to-status guard, and conversions of the plain structs.
#pragma once

#include <algorithm>
#include <functional>
#include <iterator>
#include <memory>
#include <string>

#include "vkattn/context.hpp"
#include "vkattn/error.hpp"
#include "vkattn/kvcache.hpp"
#include "vkattn/plan.hpp"
#include "vkattn/recorder.hpp"
#include "vkattn/tensor.hpp"
#include "vkattn/vkattn.h"

struct vkattn_context_t {
  std::unique_ptr<vkattn::Context> context;
};
struct vkattn_tensor_t {
  vkattn::Tensor tensor;
};
struct vkattn_recorder_t {
  std::unique_ptr<vkattn::Recorder> recorder;
};
struct vkattn_page_allocator_t {
  vkattn::PageAllocator allocator;
};

namespace vkattn::capi {

// Runs `body`, turning what it throws into a status and the thread's last error.
vkattn_status guarded(const std::function<void()>& body);

// Throws Error naming `name` when `handle` is null.
void require(const void* handle, const char* name);
// Every op's handles and structs are required.
void require_op(const void* rec, const void* params, const void* tensors);
// The tensor behind a handle; an empty Tensor for NULL (an absent optional tensor).
Tensor tensor_of(vkattn_tensor t);
// A dtype from C, Error naming `name` past VKATTN_I4.
DType dtype_of(vkattn_dtype d, const char* name);
PlanOptions plan_options_of(const vkattn_plan_options* options);
// Copies `text` into `out` (NUL-terminated, truncated to `capacity`).
void copy_text(char* out, size_t capacity, const std::string& text);
// What a recorded call chose (info may be NULL: nothing is written).
template <class CallInfo>
void fill_info(vkattn_call_info* info, const CallInfo& r) {
  if (!info) return;
  *info = {};
  copy_text(info->variant, sizeof info->variant, r.variant);
  copy_text(info->reason, sizeof info->reason, r.reason);
  if constexpr (requires { r.workgroups; r.splits; }) {
    std::copy(std::begin(r.workgroups), std::end(r.workgroups), info->workgroups);
    info->splits = r.splits;
  }
}
// A plan's JSON into the caller's buffer: the length always, the text up to `capacity`.
void write_json(const std::string& json, char* out, size_t capacity, size_t* length);
void fill_device_info(vkattn_device_info& out, uint32_t index, const DeviceCaps& caps);

}  // namespace vkattn::capi

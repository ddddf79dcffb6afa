// What the C API's files share: the handle types behind the opaque pointers,
// the exception-to-status guard, and conversions of the plain structs.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "vkattn/context.hpp"
#include "vkattn/error.hpp"
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

namespace vkattn::capi {

// Runs `body`, turning what it throws into a status and the thread's last error.
vkattn_status guarded(const std::function<void()>& body);

// Throws Error naming `name` when `handle` is null.
void require(const void* handle, const char* name);
// The tensor behind a handle; an empty Tensor for NULL (an absent optional tensor).
Tensor tensor_of(vkattn_tensor t);
PlanOptions plan_options_of(const vkattn_plan_options* options);
// Copies `text` into `out` (NUL-terminated, truncated to `capacity`).
void copy_text(char* out, size_t capacity, const std::string& text);
void fill_device_info(vkattn_device_info& out, uint32_t index, const DeviceCaps& caps);

}  // namespace vkattn::capi

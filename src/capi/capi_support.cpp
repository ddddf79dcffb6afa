#include "capi/capi_support.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <new>

namespace vkattn::capi {

namespace {

thread_local std::string t_last_error;

static_assert(VKATTN_INVALID_ARGUMENT == 1 + static_cast<int>(ErrorKind::invalid_argument) &&
                  VKATTN_IO == 1 + static_cast<int>(ErrorKind::io),
              "vkattn_status follows vkattn::ErrorKind");
static_assert(VKATTN_F32 == static_cast<int>(DType::f32) && VKATTN_I4 == static_cast<int>(DType::i4),
              "vkattn_dtype follows vkattn::DType");

vkattn_status failed(vkattn_status status, const char* message) {
  t_last_error = message;
  return status;
}

}  // namespace

vkattn_status guarded(const std::function<void()>& body) {
  try {
    body();
    return VKATTN_OK;
  } catch (const Error& e) {
    return failed(static_cast<vkattn_status>(1 + static_cast<int>(e.kind())), e.what());
  } catch (const std::bad_alloc&) {
    return failed(VKATTN_OUT_OF_MEMORY, "host allocation failed");
  } catch (const std::exception& e) {
    return failed(VKATTN_INTERNAL, e.what());
  }
}

void require(const void* handle, const char* name) {
  if (!handle) throw Error(ErrorKind::invalid_argument, fmt::format("{}: expected non-null, got NULL", name));
}

void require_op(const void* rec, const void* params, const void* tensors) {
  require(rec, "rec");
  require(params, "params");
  require(tensors, "tensors");
}

void write_json(const std::string& json, char* out, size_t capacity, size_t* length) {
  require(length, "length");
  if (capacity) require(out, "json");
  *length = json.size();
  copy_text(out, capacity, json);
}

Tensor tensor_of(vkattn_tensor t) { return t ? t->tensor : Tensor{}; }

DType dtype_of(vkattn_dtype d, const char* name) {
  if (static_cast<unsigned>(d) > VKATTN_I4)
    throw Error(ErrorKind::invalid_argument,
                fmt::format("{}: expected 0 (f32), 1 (f16), 2 (bf16), 3 (u32), 4 (i8) or 5 (i4), got {}", name, int(d)));
  return static_cast<DType>(d);
}

PlanOptions plan_options_of(const vkattn_plan_options* options) {
  PlanOptions o;
  if (!options) return o;
  if (options->variant) o.variant = options->variant;
  o.strict = options->strict != 0;
  o.splits = options->splits;
  o.tile_keys = options->tile_keys;
  o.rows = options->rows;
  o.allow_reduced_precision = options->allow_reduced_precision != 0;
  return o;
}

void copy_text(char* out, size_t capacity, const std::string& text) {
  if (!out || capacity == 0) return;
  const size_t n = std::min(capacity - 1, text.size());
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

void fill_device_info(vkattn_device_info& out, uint32_t index, const DeviceCaps& caps) {
  out = {};
  out.index = index;
  copy_text(out.name, sizeof out.name, caps.name);
  copy_text(out.type, sizeof out.type, caps.type);
  out.vendor_id = caps.vendor_id;
  out.device_id = caps.device_id;
  out.api_version = caps.api_version;
  out.subgroup_size = caps.subgroup_size;
  out.device_local_bytes = caps.device_local_bytes;
}

}  // namespace vkattn::capi

extern "C" const char* vkattn_last_error(void) { return vkattn::capi::t_last_error.c_str(); }

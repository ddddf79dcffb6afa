#include "ops/vision/vision_validate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "util/checked_size.hpp"
#include "vkattn/error.hpp"

namespace vkattn::vision {

namespace {

[[noreturn]] void bad(const std::string& msg) { throw Error(ErrorKind::invalid_argument, msg); }

}  // namespace

void check_tensor(const char* name, const Tensor& t, const Shape& want, const DeviceCaps& caps,
                  std::optional<DType> only) {
  if (!t.valid()) bad(fmt::format("{}: expected a tensor of shape {}, got none", name, shape_to_string(want)));
  if (only ? t.dtype() != *only : (t.dtype() != DType::f32 && t.dtype() != DType::f16))
    bad(fmt::format("{}: expected dtype {}, got {}", name, only ? to_string(*only) : "f32 or f16",
                    to_string(t.dtype())));
  if (t.shape() != want)
    bad(fmt::format("{}: expected shape {}, got {}", name, shape_to_string(want), shape_to_string(t.shape())));
  // These kernels address rows as packed: a strided view would be read as contiguous.
  if (!t.contiguous())
    bad(fmt::format("{}: expected a contiguous tensor (strides {}), got strides {}", name,
                    shape_to_string(Tensor::contiguous_strides(want)), shape_to_string(t.strides())));
  const uint64_t need = dtype_storage_bytes(t.dtype(), element_count(want));
  if (t.bytes() < need) bad(fmt::format("{}: expected at least {} bytes, got {}", name, need, t.bytes()));
  if (t.bytes() > caps.max_storage_buffer_range)
    throw Error(ErrorKind::unsupported,
                fmt::format("{}: expected at most {} bytes (the device's storage-buffer range), got {}", name,
                            caps.max_storage_buffer_range, t.bytes()));
}

void validate(const VisionAttentionParams& p, const VisionAttentionTensors& t, const DeviceCaps& caps) {
  if (p.patches == 0) bad("patches: expected >= 1, got 0");
  if (p.num_heads == 0) bad("num_heads: expected >= 1, got 0");
  if (p.head_dim == 0 || p.head_dim % 8 != 0 || p.head_dim > 256)
    bad(fmt::format("head_dim: expected a multiple of 8 in [8, 256], got {}", p.head_dim));
  if (p.scale && !std::isfinite(*p.scale)) bad(fmt::format("scale: expected a finite number, got {}", *p.scale));
  // Row and word indices are 32-bit in the kernels.
  const uint64_t elems = checked_mul(checked_mul(p.patches, p.num_heads, "patches x heads"), p.head_dim,
                                    "patches x heads x head_dim");
  if (elems >= (1ull << 32))
    bad(fmt::format("patches: expected patches x heads x head_dim < 2^32, got {}", elems));
  const Shape shape = p.layout == VisionLayout::phd ? Shape{p.patches, p.num_heads, p.head_dim}
                                                    : Shape{p.num_heads, p.patches, p.head_dim};
  check_tensor("q", t.q, shape, caps);
  check_tensor("k", t.k, shape, caps);
  check_tensor("v", t.v, shape, caps);
  check_tensor("out", t.out, shape, caps);
  if (t.k.dtype() != t.q.dtype())
    bad(fmt::format("k: expected the dtype of q ({}), got {}", to_string(t.q.dtype()), to_string(t.k.dtype())));
  if (t.v.dtype() != t.q.dtype())
    bad(fmt::format("v: expected the dtype of q ({}), got {}", to_string(t.q.dtype()), to_string(t.v.dtype())));
}

void validate(const PosEmbedParams& p, const PosEmbedTensors& t, const DeviceCaps& caps) {
  if (p.patches == 0) bad("patches: expected >= 1, got 0");
  if (p.hidden_size == 0) bad("hidden_size: expected >= 1, got 0");
  if (p.patches_x == 0) bad("patches_x: expected >= 1, got 0");
  if (p.pos_size == 0) bad("pos_size: expected >= 1, got 0");
  // The largest coordinates: x = patches_x - 1 once a row is full, y at the last patch.
  const uint32_t max_x = std::min(p.patches, p.patches_x) - 1, max_y = (p.patches - 1) / p.patches_x;
  if (max_x >= p.pos_size)
    bad(fmt::format("pos_size: expected > {} (largest patch x for patches_x = {}), got {}", max_x, p.patches_x,
                    p.pos_size));
  if (max_y >= p.pos_size)
    bad(fmt::format("pos_size: expected > {} (largest patch y for {} patches, patches_x = {}), got {}", max_y,
                    p.patches, p.patches_x, p.pos_size));
  check_tensor("hidden", t.hidden, {p.patches, p.hidden_size}, caps);
  check_tensor("table", t.table, {2, p.pos_size, p.hidden_size}, caps, t.hidden.dtype());
  if (t.hidden.dtype() == DType::f16 && p.hidden_size % 2 != 0)
    bad(fmt::format("hidden_size: expected an even size for f16 (two per 32-bit word), got {}", p.hidden_size));
  if (checked_mul(p.patches, p.hidden_size, "patches x hidden") >= (1ull << 32) ||
      checked_mul(2ull * p.pos_size, p.hidden_size, "2 x pos_size x hidden") >= (1ull << 32))
    bad("hidden_size: expected patches x hidden and 2 x pos_size x hidden < 2^32");
}

}  // namespace vkattn::vision

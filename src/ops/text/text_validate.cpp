#include "ops/text/text_validate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "shaders/kv_quant_interface.h"
#include "vkattn/error.hpp"

namespace vkattn::text {

namespace {

[[noreturn]] void bad(const std::string& msg) { throw Error(ErrorKind::invalid_argument, msg); }

void check_per_sequence(const char* name, const std::vector<uint32_t>& v, uint32_t batch) {
  if (v.size() != 1 && v.size() != batch)
    bad(fmt::format("{}: expected 1 or batch ({}) values, got {}", name, batch, v.size()));
}

bool is_float(DType t) { return t == DType::f32 || t == DType::f16 || t == DType::bf16; }

// How the kernels reach a tensor: bound (element indices in 32 bits, at most
// one binding), a K/V pool bound because the device cannot read it by address
// (the errors say so), or by its device address (neither limit applies).
enum class Reach { bound, kv_bound, by_address };

void check_tensor_reached(const char* name, const Tensor& t, const Shape& want, TensorKind kind,
                          const DeviceCaps& caps, Reach reach) {
  if (!t.valid()) bad(fmt::format("{}: expected a tensor of shape {}, got none", name, shape_to_string(want)));
  const bool dtype_ok = kind == TensorKind::index   ? t.dtype() == DType::u32
                        : kind == TensorKind::value ? is_float(t.dtype())
                        : kind == TensorKind::kv    ? is_float(t.dtype()) || is_quantized(t.dtype())
                                                    : t.dtype() == DType::f16;
  if (!dtype_ok) {
    const char* names[] = {"f32, f16 or bf16", "f32, f16, bf16, i8 or i4", "u32", "f16"};
    bad(fmt::format("{}: expected dtype {}, got {}", name, names[int(kind)], to_string(t.dtype())));
  }
  if (is_quantized(t.dtype())) {
    // Packed rows: the last dimension in u32 words must be packed_stride.
    const uint32_t lanes = 32 / dtype_bits(t.dtype());
    const uint64_t want_words = (want.back() + lanes - 1) / lanes;
    const uint64_t got_words = t.shape().empty() ? 0 : (t.shape().back() + lanes - 1) / lanes;
    if (got_words != want_words && t.shape().size() == want.size())
      bad(fmt::format("{}: expected packed_stride ceil(head_dim / {}) = {} u32 words per (token, KV head) row for {} "
                      "head_dim {}, got {} (shape {})",
                      name, lanes, want_words, to_string(t.dtype()), want.back(), got_words, shape_to_string(t.shape())));
    if (!t.contiguous())
      bad(fmt::format("{}: expected a dense {} cache (rows packed back to back), got strides {}", name,
                      to_string(t.dtype()), shape_to_string(t.strides())));
  }
  if (element_count(t.shape()) != element_count(want) || (t.shape().size() == want.size() && t.shape() != want))
    bad(fmt::format("{}: expected shape {}, got {}", name, shape_to_string(want), shape_to_string(t.shape())));
  if (!t.contiguous() && t.shape().size() != want.size())
    bad(fmt::format("{}: expected a strided tensor of rank {}, got shape {}", name, want.size(),
                    shape_to_string(t.shape())));
  const Shape strides = t.contiguous() ? Tensor::contiguous_strides(want) : t.strides();
  const uint64_t furthest = furthest_element(want, strides);
  const char* hint = reach == Reach::kv_bound
                         ? "; larger pools are read through buffer device addresses, which this device does not have"
                         : "";
  // The kernels index bound elements in 32 bits.
  if (furthest >= UINT32_MAX && reach != Reach::by_address)
    throw Error(ErrorKind::unsupported, fmt::format("{}: expected element indices below 2^32 - 1{}, got {}", name,
                                                    hint, furthest));
  const uint64_t need = dtype_storage_bytes(t.dtype(), want.empty() ? 0 : furthest + 1);
  if (t.bytes() < need) bad(fmt::format("{}: expected at least {} bytes, got {}", name, need, t.bytes()));
  if (t.bytes() > caps.max_storage_buffer_range && reach != Reach::by_address)
    throw Error(ErrorKind::unsupported,
                fmt::format("{}: expected at most {} bytes (the device's storage-buffer range{}), got {}", name,
                            caps.max_storage_buffer_range, hint, t.bytes()));
}

bool past_one_binding(const Tensor& t, const DeviceCaps& caps) {
  const Shape strides = t.contiguous() ? Tensor::contiguous_strides(t.shape()) : t.strides();
  return t.bytes() > caps.max_storage_buffer_range || furthest_element(t.shape(), strides) >= UINT32_MAX;
}

// K/V read by address: 16-byte aligned rows, and strides whose bytes fit the
// kernels' 32-bit byte strides.
void check_addressable(const char* name, const Tensor& t) {
  if (t.offset() % 16)
    bad(fmt::format("{}: expected a byte offset that is a multiple of 16 (read by device address), got {}", name,
                    t.offset()));
  const Shape s = t.contiguous() ? Tensor::contiguous_strides(t.shape()) : t.strides();
  for (size_t i = 0; i + 1 < s.size(); ++i)
    if (s[i] * dtype_storage_bytes(t.dtype(), 1) > UINT32_MAX)
      throw Error(ErrorKind::unsupported,
                  fmt::format("{}: expected strides below 2^32 bytes (read by device address), got {} elements of "
                              "{} in dimension {}",
                              name, s[i], to_string(t.dtype()), i));
}

}  // namespace

void check_tensor(const char* name, const Tensor& t, const Shape& want, TensorKind kind, const DeviceCaps& caps) {
  check_tensor_reached(name, t, want, kind, caps, Reach::bound);
}

RowStrides row_strides(const char* name, const Tensor& t, const Shape& want) {
  const Shape s = t.contiguous() ? Tensor::contiguous_strides(want) : t.strides();
  // The kernels read rows as 16-byte words: the head dim is contiguous and
  // every row starts on a multiple of 8 elements.
  if (s.size() != 4 || s[3] != 1 || s[0] % 8 || s[1] % 8 || s[2] % 8 || s[0] > UINT32_MAX || s[1] > UINT32_MAX ||
      s[2] > UINT32_MAX)
    bad(fmt::format("{}: expected strides [multiple of 8, multiple of 8, multiple of 8, 1], got {}", name,
                    shape_to_string(s)));
  return {static_cast<uint32_t>(s[0]), static_cast<uint32_t>(s[1]), static_cast<uint32_t>(s[2])};
}

void check_quant_group(uint32_t group) {
  if (group != KV_QUANT_GROUP_ROW && group != KV_QUANT_GROUP)
    bad(fmt::format("kv_quant_group: expected {} (one scale per row) or {} (per {} elements), got {}", KV_QUANT_GROUP_ROW,
                    KV_QUANT_GROUP, KV_QUANT_GROUP, group));
}

Shape scale_shape(const Shape& kv_shape, uint32_t group) {
  Shape s(kv_shape.begin(), kv_shape.end() - 1);
  if (group != KV_QUANT_GROUP_ROW) s.push_back(kvquant::scale_groups(group, uint32_t(kv_shape.back())));
  return s;
}

void validate_params(const TextAttentionParams& p) {
  if (p.batch == 0) bad("batch: expected >= 1, got 0");
  if (p.seq_len == 0) bad("seq_len: expected >= 1, got 0");
  if (p.num_kv_heads == 0) bad("num_kv_heads: expected >= 1, got 0");
  if (p.num_heads == 0 || p.num_heads % p.num_kv_heads != 0)
    bad(fmt::format("num_heads: expected a positive multiple of num_kv_heads ({}), got {}", p.num_kv_heads,
                    p.num_heads));
  if (p.head_dim == 0 || p.head_dim % 8 != 0 || p.head_dim > 512)
    bad(fmt::format("head_dim: expected a multiple of 8 in [8, 512], got {}", p.head_dim));
  if (p.scale && !(std::isfinite(*p.scale)))
    bad(fmt::format("scale: expected a finite number, got {}", *p.scale));
  if (!(p.softcap >= 0.0f) || !std::isfinite(p.softcap))
    bad(fmt::format("softcap: expected >= 0 (0 = off), got {}", p.softcap));
  check_per_sequence("kv_len", p.kv_len, p.batch);
  check_per_sequence("start_pos", p.start_pos, p.batch);
  check_per_sequence("kv_start", p.kv_start, p.batch);
  check_tier_params(p.layout, p.hot_window, p.cold_layout);
  if (p.kv_capacity == 0)
    bad(fmt::format("kv_capacity: expected >= 1 ({}), got 0",
                    p.slot_layout() == KvLayout::paged ? "the page size" : "cache slots per sequence"));
  // One pass per distinct value, not per sequence: with one value each, the
  // loop is one step however large the batch (validation time is bounded by
  // the data the caller passed, never by a number).
  const size_t distinct = std::max({p.kv_len.size(), p.start_pos.size(), p.kv_start.size()});
  for (uint32_t b = 0; b < distinct; ++b) {
    const uint64_t len = p.kv_len_of(b), start = p.kv_start_of(b);
    if (p.start_pos_of(b) + uint64_t(p.seq_len) >= (1ull << 31))
      bad(fmt::format("start_pos: expected start_pos + seq_len < 2^31, got {} for sequence {}", p.start_pos_of(b), b));
    if (start + len >= (1ull << 31))
      bad(fmt::format("kv_start: expected kv_start + kv_len < 2^31, got {} for sequence {}", start + len, b));
    // A tiered cache's positions all have a cold slot (every token is written to both tiers).
    switch (p.slot_layout()) {
      case KvLayout::tiered:  // not a slot layout (rejected above)
      case KvLayout::contiguous:
        if (start + len > p.kv_capacity)
          bad(fmt::format("kv_len: expected kv_start + kv_len <= kv_capacity ({}), got {} + {} for sequence {}",
                          p.kv_capacity, start, len, b));
        break;
      case KvLayout::ring:
        if (len > p.kv_capacity)
          bad(fmt::format("kv_len: expected <= kv_capacity ({}, the ring size), got {} for sequence {}",
                          p.kv_capacity, len, b));
        break;
      case KvLayout::paged:
        if (p.num_pages == 0) bad("num_pages: expected >= 1, got 0");
        if (p.max_pages == 0) bad("max_pages: expected >= 1, got 0");
        if (start + len > uint64_t(p.max_pages) * p.kv_capacity)
          bad(fmt::format("kv_len: expected kv_start + kv_len <= max_pages * page_size ({}), got {} for sequence {}",
                          uint64_t(p.max_pages) * p.kv_capacity, start + len, b));
        break;
    }
  }
}

bool kv_by_address(const TextAttentionTensors& t, const DeviceCaps& caps) {
  return caps.buffer_device_address && t.k.valid() && t.v.valid() &&
         (past_one_binding(t.k, caps) || past_one_binding(t.v, caps));
}

Shape kv_shape(const TextAttentionParams& p) {
  return p.slot_layout() == KvLayout::paged ? Shape{p.num_pages, p.kv_capacity, p.num_kv_heads, p.head_dim}
                                            : Shape{p.batch, p.kv_capacity, p.num_kv_heads, p.head_dim};
}

void check_tier_params(KvLayout layout, uint32_t hot_window, KvLayout cold_layout) {
  if (layout != KvLayout::tiered) return;
  if (hot_window == 0) bad("hot_window: expected >= 1 (hot ring slots of the tiered layout), got 0");
  if (cold_layout != KvLayout::contiguous && cold_layout != KvLayout::paged)
    bad(fmt::format("cold_layout: expected contiguous or paged for the tiered layout, got {}", to_string(cold_layout)));
}

void check_hot_ring(KvLayout layout, const Tensor& hot_k, const Tensor& hot_v, const Shape& hot,
                    const DeviceCaps& caps) {
  for (auto [name, tensor] : {std::pair{"hot_k", &hot_k}, {"hot_v", &hot_v}}) {
    if (layout != KvLayout::tiered) {
      if (tensor->valid())
        bad(fmt::format("{}: expected none for the {} layout (only tiered has a hot ring), got shape {}", name,
                        to_string(layout), shape_to_string(tensor->shape())));
      continue;
    }
    check_tensor(name, *tensor, hot, TensorKind::value, caps);
    if (tensor->dtype() != DType::f16)
      bad(fmt::format("{}: expected dtype f16 (the hot ring), got {}", name, to_string(tensor->dtype())));
    if (!tensor->contiguous())
      bad(fmt::format("{}: expected a packed tensor of shape {}, got strides {}", name, shape_to_string(hot),
                      shape_to_string(tensor->strides())));
  }
}

Shape hot_kv_shape(const TextAttentionParams& p) { return {p.batch, p.hot_window, p.num_kv_heads, p.head_dim}; }

void validate_tensors(const TextAttentionParams& p, const TextAttentionTensors& t, const DeviceCaps& caps) {
  const Shape qshape{p.batch, p.seq_len, p.num_heads, p.head_dim};
  const Shape kvshape = kv_shape(p);
  check_tensor("q", t.q, qshape, TensorKind::value, caps);
  const bool by_address = kv_by_address(t, caps);
  if (by_address && is_quantized(t.k.dtype()))
    throw Error(ErrorKind::unsupported,
                fmt::format("k: expected an {} cache within one storage-buffer binding ({} bytes), got {} bytes "
                            "(quantized pools are not read by device address)",
                            to_string(t.k.dtype()), caps.max_storage_buffer_range, t.k.bytes()));
  const Reach kv_reach = by_address ? Reach::by_address : Reach::kv_bound;
  check_tensor_reached("k", t.k, kvshape, TensorKind::kv, caps, kv_reach);
  check_tensor_reached("v", t.v, kvshape, TensorKind::kv, caps, kv_reach);
  if (by_address) {
    check_addressable("k", t.k);
    check_addressable("v", t.v);
  }
  check_tensor("out", t.out, qshape, TensorKind::value, caps);
  if (t.k.dtype() != t.v.dtype())
    bad(fmt::format("v: expected the dtype of k ({}), got {}", to_string(t.k.dtype()), to_string(t.v.dtype())));
  if (t.q.dtype() != DType::f32 && t.q.dtype() != t.k.dtype() && !is_quantized(t.k.dtype()))
    bad(fmt::format("k: expected {} (Q is {}; mixed Q/KV takes f32 Q), got {}", to_string(t.q.dtype()),
                    to_string(t.q.dtype()), to_string(t.k.dtype())));
  if (p.slot_layout() == KvLayout::paged)
    check_tensor("page_table", t.page_table, {p.batch, p.max_pages}, TensorKind::index, caps);
  if (p.layout == KvLayout::tiered) {
    // The kernels read both tiers through one row geometry (16-bit words) and
    // address the hot ring as a packed tensor.
    if (t.k.dtype() == DType::f32)
      bad(fmt::format("k: expected f16, bf16, i8 or i4 for the cold tier of the tiered layout, got {}",
                      to_string(t.k.dtype())));
  }
  check_hot_ring(p.layout, t.hot_k, t.hot_v, hot_kv_shape(p), caps);
  for (auto [name, tensor] : {std::pair{"kv_len", &t.kv_len}, {"start_pos", &t.start_pos}, {"kv_start", &t.kv_start}})
    if (tensor->valid()) check_tensor(name, *tensor, {p.batch}, TensorKind::index, caps);
  if (t.indirect.valid()) check_tensor("indirect", t.indirect, {3}, TensorKind::index, caps);
  if (is_quantized(t.k.dtype())) {
    check_quant_group(p.kv_quant_group);
    const Shape sshape = scale_shape(kvshape, p.kv_quant_group);
    check_tensor("k_scale", t.k_scale, sshape, TensorKind::scale, caps);
    check_tensor("v_scale", t.v_scale, sshape, TensorKind::scale, caps);
  }
}

}  // namespace vkattn::text

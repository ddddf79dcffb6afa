#include "ops/bdpa/bdpa_validate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>

#include "ops/text/text_validate.hpp"
#include "shaders/bdpa_interface.h"
#include "vkattn/error.hpp"

namespace vkattn::bdpa {

namespace {

[[noreturn]] void bad(const std::string& msg) { throw Error(ErrorKind::invalid_argument, msg); }

constexpr uint32_t kMaxHeadDim = 256;  // the variant table's limit (bdpa_variants.cpp)
constexpr uint32_t kMaxVocab = 1u << 24;

std::string dtype_list(std::initializer_list<DType> types) {
  std::string s;
  for (DType t : types) s += std::string(s.empty() ? "" : " or ") + std::string(to_string(t));
  return s;
}

// A contiguous tensor (or, where `strided` is set, one of any 8-aligned row
// strides, checked later by text::row_strides) of shape `want` and one of `types`.
void check_tensor(const char* name, const Tensor& t, const Shape& want, std::initializer_list<DType> types,
                  const DeviceCaps& caps, bool strided = false) {
  if (!t.valid()) bad(fmt::format("{}: expected a tensor of shape {}, got none", name, shape_to_string(want)));
  if (std::find(types.begin(), types.end(), t.dtype()) == types.end())
    bad(fmt::format("{}: expected dtype {}, got {}", name, dtype_list(types), to_string(t.dtype())));
  if (element_count(t.shape()) != element_count(want) || (t.shape().size() == want.size() && t.shape() != want))
    bad(fmt::format("{}: expected shape {}, got {}", name, shape_to_string(want), shape_to_string(t.shape())));
  if (!strided && !t.contiguous()) bad(fmt::format("{}: expected a contiguous tensor, got strides {}", name,
                                                   shape_to_string(t.strides())));
  const Shape strides = t.contiguous() ? Tensor::contiguous_strides(want) : t.strides();
  const uint64_t furthest = want.empty() ? 0 : furthest_element(want, strides);
  if (furthest >= UINT32_MAX)  // the kernels index elements in 32 bits
    throw Error(ErrorKind::unsupported,
                fmt::format("{}: expected element indices below 2^32 - 1, got {}", name, furthest));
  const uint64_t need = dtype_storage_bytes(t.dtype(), furthest + 1);
  if (t.bytes() < need) bad(fmt::format("{}: expected at least {} bytes, got {}", name, need, t.bytes()));
  if (t.bytes() > caps.max_storage_buffer_range)
    throw Error(ErrorKind::unsupported, fmt::format("{}: expected at most {} bytes (the device's storage-buffer "
                                                    "range), got {}",
                                                    name, caps.max_storage_buffer_range, t.bytes()));
}

void check_per_sequence(const char* name, const std::vector<uint32_t>& v, uint32_t batch) {
  if (v.size() != 1 && v.size() != batch)
    bad(fmt::format("{}: expected 1 or batch ({}) values, got {}", name, batch, v.size()));
}

void check_head_dim(uint32_t d) {
  if (d == 0 || d % 8 != 0 || d > kMaxHeadDim)
    bad(fmt::format("head_dim: expected a multiple of 8 in [8, {}], got {}", kMaxHeadDim, d));
}

constexpr std::initializer_list<DType> kFloat = {DType::f32, DType::f16, DType::bf16};

}  // namespace

void validate_params(const BdpaParams& p) {
  check_head_dim(p.head_dim);
  // The rest a BDPA call shares with a text call over a contiguous cache of
  // kv_capacity index entries: heads, scale, softcap, per-sequence values and ranges.
  text::validate_params(p.contiguous_equivalent());
  if (p.num_basis == 0) bad("num_basis: expected >= 1 basis rows, got 0");
  if (p.num_residual == 0) bad("num_residual: expected >= 1 residual rows, got 0");
  if (p.rotary_dim % 2 != 0 || p.rotary_dim > p.head_dim)
    bad(fmt::format("rotary_dim: expected an even number <= head_dim ({}), got {}", p.head_dim, p.rotary_dim));
  if (p.rotary_dim > 0 && p.rope_positions == 0) bad("rope_positions: expected >= 1 with rotary_dim > 0, got 0");
}

void validate_tensors(const BdpaParams& p, const BdpaTensors& t, const DeviceCaps& caps) {
  const Shape qshape{p.batch, p.seq_len, p.num_heads, p.head_dim};
  check_tensor("q", t.q, qshape, kFloat, caps, true);
  check_tensor("out", t.out, qshape, kFloat, caps, true);
  check_tensor("basis_k", t.basis_k, {p.num_basis, p.num_kv_heads, p.head_dim}, kFloat, caps);
  check_tensor("basis_v", t.basis_v, {p.num_basis, p.num_kv_heads, p.head_dim}, {t.basis_k.dtype()}, caps);
  check_tensor("residual_k", t.residual_k, {p.num_residual, p.num_kv_heads, p.head_dim}, {DType::i8}, caps);
  check_tensor("residual_v", t.residual_v, {p.num_residual, p.num_kv_heads, p.head_dim}, {DType::i8}, caps);
  check_tensor("residual_k_scale", t.residual_k_scale, {p.num_residual, p.num_kv_heads}, {DType::f32}, caps);
  check_tensor("residual_v_scale", t.residual_v_scale, {p.num_residual, p.num_kv_heads}, {DType::f32}, caps);
  check_tensor("index", t.index, {p.batch, p.kv_capacity, BDPA_INDEX_WORDS}, {DType::u32}, caps);
  if (p.rotary_dim > 0) {
    check_tensor("rope_cos", t.rope_cos, {p.rope_positions, p.rotary_dim / 2}, {DType::f32}, caps);
    check_tensor("rope_sin", t.rope_sin, {p.rope_positions, p.rotary_dim / 2}, {DType::f32}, caps);
  }
  if (t.q.dtype() != DType::f32 && t.q.dtype() != t.basis_k.dtype())
    bad(fmt::format("basis_k: expected {} (Q is {}; mixed Q/basis takes f32 Q), got {}", to_string(t.q.dtype()),
                    to_string(t.q.dtype()), to_string(t.basis_k.dtype())));
  for (auto [name, tensor] : {std::pair{"kv_len", &t.kv_len}, {"start_pos", &t.start_pos}})
    if (tensor->valid()) check_tensor(name, *tensor, {p.batch}, {DType::u32}, caps);
}

void validate_build(const BdpaBuildParams& p, const BdpaBuildTensors& t, const DeviceCaps& caps) {
  if (p.batch == 0) bad("batch: expected >= 1, got 0");
  if (p.kv_capacity == 0) bad("kv_capacity: expected >= 1 slots per sequence, got 0");
  if (p.num_kv_heads == 0) bad("num_kv_heads: expected >= 1, got 0");
  check_head_dim(p.head_dim);
  // One workgroup scans the vocabulary: a bound keeps that scan short.
  if (p.vocab_size == 0 || p.vocab_size > kMaxVocab)
    bad(fmt::format("vocab_size: expected a value in [1, {}], got {}", kMaxVocab, p.vocab_size));
  check_per_sequence("kv_len", p.kv_len, p.batch);
  for (uint32_t b = 0; b < p.kv_len.size(); ++b)
    if (p.kv_len_of(b) > p.kv_capacity)
      bad(fmt::format("kv_len: expected <= kv_capacity ({}), got {} for sequence {}", p.kv_capacity, p.kv_len_of(b),
                      b));
  if (uint64_t(p.batch) * p.kv_capacity >= BDPA_NONE)
    throw Error(ErrorKind::unsupported, fmt::format("kv_capacity: expected batch x kv_capacity below 2^32 - 1, got {}",
                                                    uint64_t(p.batch) * p.kv_capacity));
  const uint64_t rows = uint64_t(p.batch) * p.kv_capacity;
  const Shape kvshape{p.batch, p.kv_capacity, p.num_kv_heads, p.head_dim};
  const Shape rowshape{rows, p.num_kv_heads, p.head_dim};
  check_tensor("k", t.k, kvshape, kFloat, caps);
  check_tensor("v", t.v, kvshape, {t.k.dtype()}, caps);
  check_tensor("token_ids", t.token_ids, {p.batch, p.kv_capacity}, {DType::u32}, caps);
  if (t.kv_len.valid()) check_tensor("kv_len", t.kv_len, {p.batch}, {DType::u32}, caps);
  check_tensor("basis_k", t.basis_k, rowshape, kFloat, caps);
  check_tensor("basis_v", t.basis_v, rowshape, {t.basis_k.dtype()}, caps);
  check_tensor("residual_k", t.residual_k, rowshape, {DType::i8}, caps);
  check_tensor("residual_v", t.residual_v, rowshape, {DType::i8}, caps);
  check_tensor("residual_k_scale", t.residual_k_scale, {rows, p.num_kv_heads}, {DType::f32}, caps);
  check_tensor("residual_v_scale", t.residual_v_scale, {rows, p.num_kv_heads}, {DType::f32}, caps);
  check_tensor("index", t.index, {p.batch, p.kv_capacity, BDPA_INDEX_WORDS}, {DType::u32}, caps);
  check_tensor("num_basis", t.num_basis, {1}, {DType::u32}, caps);
  if (uint64_t(p.vocab_size) * 4 > caps.max_storage_buffer_range)
    throw Error(ErrorKind::unsupported, fmt::format("vocab_size: expected at most {} (the device's storage-buffer "
                                                    "range / 4), got {}",
                                                    caps.max_storage_buffer_range / 4, p.vocab_size));
}

}  // namespace vkattn::bdpa

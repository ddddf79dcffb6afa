// Argument checks for text attention, before anything reaches the GPU.
#pragma once

#include <array>

#include "ops/dtype_code.hpp"
#include "vkattn/caps.hpp"
#include "vkattn/text.hpp"

namespace vkattn::text {

// Throws Error naming the parameter, the expected and the actual value.
void validate_params(const TextAttentionParams& p);
void validate_tensors(const TextAttentionParams& p, const TextAttentionTensors& t, const DeviceCaps& caps);

// Whether K/V are read through their device addresses: a pool larger than one
// storage-buffer binding (or than 32-bit element indices reach) on a device
// that has them.
bool kv_by_address(const TextAttentionTensors& t, const DeviceCaps& caps);

// Shapes of K/V (the cold tier's, for tiered) and of the tiered layout's hot ring.
Shape kv_shape(const TextAttentionParams& p);
Shape hot_kv_shape(const TextAttentionParams& p);

// TEXT_LAYOUT_* code of the kernels (text_attention_interface.h); dtype codes
// are in ops/dtype_code.hpp.
uint32_t layout_code(KvLayout l);

// What a tensor holds: float values, K/V (float or quantized), u32 indices, f16 scales.
enum class TensorKind { value, kv, index, scale };
// Throws Error naming `name` unless t is a valid tensor of `kind` and shape `want`
// (or a tensor of as many elements), in bounds and within the device's binding range.
void check_tensor(const char* name, const Tensor& t, const Shape& want, TensorKind kind, const DeviceCaps& caps);
// The tiered layout's hot_window and cold_layout (nothing to check for the others).
void check_tier_params(KvLayout layout, uint32_t hot_window, KvLayout cold_layout);
// hot_k/hot_v: the packed f16 hot ring of shape `hot` for the tiered layout, none for the others.
void check_hot_ring(KvLayout layout, const Tensor& hot_k, const Tensor& hot_v, const Shape& hot,
                    const DeviceCaps& caps);
// Quantized caches: the scale granularity, and the scales' shape for a cache of shape kv_shape.
void check_quant_group(uint32_t group);
Shape scale_shape(const Shape& kv_shape, uint32_t group);

// Element strides of dims 0-2 of a 4-D q/k/v/out tensor of shape `want`, as the
// kernels take them; throws Error naming `name` if they cannot.
using RowStrides = std::array<uint32_t, 3>;
RowStrides row_strides(const char* name, const Tensor& t, const Shape& want);

}  // namespace vkattn::text

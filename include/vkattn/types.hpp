// Element types and tensor shapes shared by every op.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vkattn/export.hpp"

namespace vkattn {

// Storage types of tensor elements. bf16 is stored as the upper 16 bits of an
// f32; i8/i4 are packed little-endian into u32 words (two's complement).
enum class DType : uint8_t { f32, f16, bf16, u32, i8, i4 };

VKATTN_API std::string_view to_string(DType t);
VKATTN_API DType dtype_from_string(std::string_view name);  // throws Error naming "dtype"
// Bits one element occupies in storage.
VKATTN_API uint32_t dtype_bits(DType t);
// Bytes `count` elements occupy, rounded up to whole u32 words for packed
// types; a count whose bytes pass 2^64 throws Error naming "bytes".
VKATTN_API size_t dtype_storage_bytes(DType t, size_t count);

using Shape = std::vector<uint64_t>;
VKATTN_API std::string shape_to_string(const Shape& s);
// Product of the dimensions; a product past 2^64 throws Error naming the shape.
VKATTN_API uint64_t element_count(const Shape& s);
// Element index of the last element of `shape` through `strides` (0 for an
// empty shape); past 2^64 throws Error naming "strides".
VKATTN_API uint64_t furthest_element(const Shape& shape, const Shape& strides);

}  // namespace vkattn

// NumPy .npy files (format versions 1.0, 2.0 and 3.0; little-endian, C order)
// for test vectors and CLI inputs/outputs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace vkattn::io {

// One array: its NumPy dtype string ('<f4', '<f2', '<f8', '<u4', '<i4', '<u8',
// '<i8', '|i1', '|u1'), its shape and its raw little-endian bytes in C order.
struct NpyArray {
  std::string descr;
  std::vector<uint64_t> shape;
  std::vector<std::byte> data;

  uint64_t elements() const;
};

// Bytes one element of `descr` occupies; throws Error(invalid_argument) naming
// "descr" for a dtype this reader does not support.
size_t npy_item_size(const std::string& descr);

// Throws Error(io) naming the file and the offending field: unreadable file,
// bad magic, unknown version, malformed header, Fortran order, big-endian or
// unsupported descr, or a data size other than shape and dtype imply.
// Only regular files are read (a FIFO or device is refused, never waited on);
// headers are capped at 1 MiB and 64 dimensions.
NpyArray read_npy(const std::string& path);
// The same from bytes already in memory; `name` stands for the file in errors.
NpyArray parse_npy(std::string_view bytes, const std::string& name);
// Writes version 1.0 (2.0 when the header needs it) to a temporary file beside
// `path`, renamed over it once complete. Throws Error(invalid_argument)
// when data does not match descr and shape, Error(io) when the file cannot be written.
void write_npy(const std::string& path, const NpyArray& array);

// Arrays built from host values.
NpyArray npy_from_f32(std::span<const float> values, std::vector<uint64_t> shape);
NpyArray npy_from_f64(std::span<const double> values, std::vector<uint64_t> shape);
NpyArray npy_from_u32(std::span<const uint32_t> values, std::vector<uint64_t> shape);

// Element values as float: '<f4', '<f2' and '<f8' (narrowed). Other dtypes
// throw Error(invalid_argument) naming "descr".
std::vector<float> as_f32(const NpyArray& array);
// Element values as u32: '<u4', '<i4', '<u8', '<i8', '|u1', '|i1' whose values
// fit in [0, 2^32); an element out of that range throws naming its index.
std::vector<uint32_t> as_u32(const NpyArray& array);

}  // namespace vkattn::io

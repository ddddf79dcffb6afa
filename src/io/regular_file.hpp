// Reading a whole input file that the caller named: only regular files (a
// FIFO, a device such as /dev/zero or a directory may never end or block
// forever), and only up to a size limit.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace vkattn::io {

// The bytes of `path`. Throws Error(io) naming `what` and the path when the
// file cannot be opened, is not a regular file, is larger than max_bytes, or
// changes size while being read.
std::string read_regular_file(const std::string& path, uint64_t max_bytes, std::string_view what);

}  // namespace vkattn::io

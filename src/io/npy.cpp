#include "io/npy.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <bit>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <unistd.h>
#include <limits>
#include <string_view>
#include <utility>

#include "io/regular_file.hpp"
#include "reference/rounding.hpp"
#include "vkattn/error.hpp"

static_assert(std::endian::native == std::endian::little, "npy data is read and written as little-endian bytes");

namespace vkattn::io {

namespace {

constexpr std::array<char, 6> kMagic = {'\x93', 'N', 'U', 'M', 'P', 'Y'};
// numpy writes headers of a few hundred bytes and at most 64 dimensions; the
// caps keep a hostile file from costing more than a small allocation.
constexpr uint64_t kMaxHeaderBytes = 1 << 20;
constexpr size_t kMaxDims = 64;
constexpr uint64_t kMaxFileBytes = 1ull << 40;

struct Descr {
  std::string_view name;
  size_t size;
};
constexpr std::array<Descr, 9> kDescrs = {{{"<f4", 4}, {"<f2", 2}, {"<f8", 8}, {"<u4", 4}, {"<i4", 4},
                                           {"<u8", 8}, {"<i8", 8}, {"|i1", 1}, {"|u1", 1}}};

[[noreturn]] void io_error(const std::string& message) { throw Error(ErrorKind::io, message); }
[[noreturn]] void invalid(const std::string& message) { throw Error(ErrorKind::invalid_argument, message); }

std::string supported_descrs() {
  std::string s;
  for (const auto& d : kDescrs) s += fmt::format("{}'{}'", s.empty() ? "" : ", ", d.name);
  return s;
}

const Descr* find_descr(std::string_view name) {
  for (const auto& d : kDescrs)
    if (d.name == name) return &d;
  return nullptr;
}

// Element count of `shape`, or nothing when it overflows 64 bits.
bool checked_elements(const std::vector<uint64_t>& shape, uint64_t& count) {
  count = 1;
  for (uint64_t dim : shape)
    if (dim != 0 && count > std::numeric_limits<uint64_t>::max() / dim) return false;
    else count *= dim;
  return true;
}

std::string shape_string(const std::vector<uint64_t>& shape) { return fmt::format("({})", fmt::join(shape, ", ")); }

// The header is a Python dict literal: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& path) : text_(text), path_(path) {}

  void parse(NpyArray& array, bool& fortran_order) {
    bool has_descr = false, has_order = false, has_shape = false;
    expect('{');
    while (!eat('}')) {
      const std::string key = string_literal();
      expect(':');
      if (key == "descr") {
        array.descr = string_literal();
        has_descr = true;
      } else if (key == "fortran_order") {
        const std::string word = identifier();
        if (word != "True" && word != "False") fail("True or False for 'fortran_order'");
        fortran_order = word == "True";
        has_order = true;
      } else if (key == "shape") {
        array.shape = int_tuple();
        has_shape = true;
      } else {
        io_error(fmt::format("{}: header: expected keys 'descr', 'fortran_order', 'shape', got '{}'", path_, key));
      }
      if (!eat(',')) {
        expect('}');
        break;
      }
    }
    for (auto [present, name] : {std::pair{has_descr, "descr"}, {has_order, "fortran_order"}, {has_shape, "shape"}})
      if (!present) io_error(fmt::format("{}: {}: expected the key in the header, got none", path_, name));
  }

 private:
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool eat(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) return ++pos_, true;
    return false;
  }
  void expect(char c) {
    if (!eat(c)) fail(fmt::format("'{}'", c));
  }
  [[noreturn]] void fail(const std::string& what) {
    io_error(fmt::format("{}: header: expected {} at offset {}, got '{}'", path_, what, pos_,
                         text_.substr(pos_, 20)));
  }
  std::string string_literal() {
    skip_space();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) fail("a quoted string");
    const char quote = text_[pos_++];
    const size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) fail("a closing quote");
    std::string s(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return s;
  }
  std::string identifier() {
    skip_space();
    const size_t start = pos_;
    while (pos_ < text_.size() && std::isalpha(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }
  std::vector<uint64_t> int_tuple() {
    std::vector<uint64_t> dims;
    expect('(');
    while (!eat(')')) {
      skip_space();
      const size_t start = pos_;
      uint64_t value = 0;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        const uint64_t digit = static_cast<uint64_t>(text_[pos_] - '0');
        if (value > (std::numeric_limits<uint64_t>::max() - digit) / 10) fail("a dimension below 2^64");
        value = value * 10 + digit;
        ++pos_;
      }
      if (pos_ == start) fail("a non-negative integer dimension");
      eat('L');  // Python 2 long suffix
      if (dims.size() == kMaxDims) fail(fmt::format("at most {} dimensions", kMaxDims));
      dims.push_back(value);
      if (!eat(',')) {
        expect(')');
        break;
      }
    }
    return dims;
  }

  std::string_view text_;
  const std::string& path_;
  size_t pos_ = 0;
};

template <typename T>
T load(const std::byte* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

template <typename T>
std::vector<uint32_t> widen_to_u32(const NpyArray& array) {
  const size_t n = array.data.size() / sizeof(T);
  std::vector<uint32_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    const T value = load<T>(array.data.data() + i * sizeof(T));
    if (std::cmp_less(value, 0) || std::cmp_greater(value, std::numeric_limits<uint32_t>::max()))
      invalid(fmt::format("data: expected values in [0, 2^32) for u32, got {} at element {} of '{}'", value, i,
                          array.descr));
    out[i] = static_cast<uint32_t>(value);
  }
  return out;
}

template <typename T>
NpyArray from_values(std::span<const T> values, std::vector<uint64_t> shape, const char* descr) {
  NpyArray array{descr, std::move(shape), {}};
  uint64_t count = 0;
  if (!checked_elements(array.shape, count) || count != values.size())
    invalid(fmt::format("shape: expected {} elements (the values given), got shape {}", values.size(),
                        shape_string(array.shape)));
  array.data.resize(values.size_bytes());
  if (!values.empty()) std::memcpy(array.data.data(), values.data(), values.size_bytes());
  return array;
}

}  // namespace

uint64_t NpyArray::elements() const {
  uint64_t count = 0;
  if (!checked_elements(shape, count))
    invalid(fmt::format("shape: expected below 2^64 elements, got {}", shape_string(shape)));
  return count;
}

size_t npy_item_size(const std::string& descr) {
  if (const Descr* d = find_descr(descr)) return d->size;
  invalid(fmt::format("descr: expected one of {}, got '{}'", supported_descrs(), descr));
}

NpyArray parse_npy(std::string_view bytes, const std::string& path) {
  const uint64_t file_size = bytes.size();
  std::array<char, 8> prefix{};
  if (file_size < prefix.size() || !std::equal(kMagic.begin(), kMagic.end(), bytes.begin()))
    io_error(fmt::format("{}: magic: expected the bytes \\x93NUMPY at the start, got none (not a .npy file)", path));
  std::memcpy(prefix.data(), bytes.data(), prefix.size());
  const int major = static_cast<unsigned char>(prefix[6]), minor = static_cast<unsigned char>(prefix[7]);
  if (major < 1 || major > 3)
    io_error(fmt::format("{}: version: expected 1.0, 2.0 or 3.0, got {}.{}", path, major, minor));

  // Version 1.0 stores the header length in 2 bytes, 2.0 and 3.0 in 4.
  const size_t len_bytes = major == 1 ? 2 : 4;
  if (file_size < prefix.size() + len_bytes)
    io_error(fmt::format("{}: header length: expected {} bytes, got a truncated file of {} bytes", path, len_bytes,
                         file_size));
  uint64_t header_len = 0;
  for (size_t i = len_bytes; i-- > 0;) header_len = header_len << 8 | static_cast<unsigned char>(bytes[prefix.size() + i]);
  if (header_len > kMaxHeaderBytes)
    io_error(fmt::format("{}: header: expected at most {} bytes, got {}", path, kMaxHeaderBytes, header_len));
  const uint64_t data_offset = prefix.size() + len_bytes + header_len;
  if (data_offset > file_size)
    io_error(fmt::format("{}: header: expected {} bytes, got {}", path, header_len,
                         file_size - prefix.size() - len_bytes));
  const std::string_view header = bytes.substr(prefix.size() + len_bytes, header_len);

  NpyArray array;
  bool fortran_order = false;
  HeaderParser(header, path).parse(array, fortran_order);
  if (fortran_order) io_error(fmt::format("{}: fortran_order: expected False (C order), got True", path));
  if (!array.descr.empty() && array.descr[0] == '>')
    io_error(fmt::format("{}: descr: expected a little-endian dtype ('<' or '|'), got '{}'", path, array.descr));
  const Descr* descr = find_descr(array.descr);
  if (!descr) io_error(fmt::format("{}: descr: expected one of {}, got '{}'", path, supported_descrs(), array.descr));
  uint64_t count = 0;
  if (!checked_elements(array.shape, count) || count > std::numeric_limits<uint64_t>::max() / descr->size)
    io_error(fmt::format("{}: shape: expected fewer than 2^64 bytes of data, got {}", path, shape_string(array.shape)));

  const uint64_t data_bytes = count * descr->size, actual = file_size - data_offset;
  if (actual != data_bytes)
    io_error(fmt::format("{}: data: expected {} bytes (shape {} of '{}'), got {}", path, data_bytes,
                         shape_string(array.shape), array.descr, actual));
  array.data.resize(data_bytes);
  if (data_bytes) std::memcpy(array.data.data(), bytes.data() + data_offset, data_bytes);
  return array;
}

NpyArray read_npy(const std::string& path) {
  return parse_npy(read_regular_file(path, kMaxFileBytes, ".npy file"), path);
}

void write_npy(const std::string& path, const NpyArray& array) {
  const size_t item = npy_item_size(array.descr);
  const uint64_t expected = array.elements() * item;
  if (array.data.size() != expected)
    invalid(fmt::format("data: expected {} bytes (shape {} of '{}'), got {}", expected, shape_string(array.shape),
                        array.descr, array.data.size()));

  const std::string dims = array.shape.size() == 1 ? fmt::format("({},)", array.shape[0]) : shape_string(array.shape);
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", array.descr, dims);
  // Pad with spaces and a final newline so the data starts 64-byte aligned;
  // version 1.0 holds at most 65535 header bytes.
  const bool v2 = header.size() + 64 > 65535;
  const size_t prefix = v2 ? 12 : 10;
  header.append(63 - (prefix + header.size()) % 64, ' ');
  header += '\n';

  // Written next to the target and renamed over it only when complete, so a
  // failed write never leaves a truncated .npy behind.
  const std::string tmp = fmt::format("{}.tmp{}", path, static_cast<long>(getpid()));
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  if (!out) io_error(fmt::format("{}: file: expected a writable path, got none (cannot open)", path));
  out.write(kMagic.data(), kMagic.size());
  const char version[2] = {static_cast<char>(v2 ? 2 : 1), 0};
  out.write(version, 2);
  const uint32_t len = static_cast<uint32_t>(header.size());
  const unsigned char len_bytes[4] = {static_cast<unsigned char>(len), static_cast<unsigned char>(len >> 8),
                                      static_cast<unsigned char>(len >> 16), static_cast<unsigned char>(len >> 24)};
  out.write(reinterpret_cast<const char*>(len_bytes), v2 ? 4 : 2);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(reinterpret_cast<const char*>(array.data.data()), static_cast<std::streamsize>(array.data.size()));
  out.close();
  std::error_code ec;
  if (!out) {
    std::filesystem::remove(tmp, ec);
    io_error(fmt::format("{}: file: expected {} bytes written, got a write error", path,
                         prefix + header.size() + array.data.size()));
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    io_error(fmt::format("{}: file: expected to replace it with the written data, got error '{}'", path,
                         ec.message()));
  }
}

NpyArray npy_from_f32(std::span<const float> values, std::vector<uint64_t> shape) {
  return from_values(values, std::move(shape), "<f4");
}
NpyArray npy_from_f64(std::span<const double> values, std::vector<uint64_t> shape) {
  return from_values(values, std::move(shape), "<f8");
}
NpyArray npy_from_u32(std::span<const uint32_t> values, std::vector<uint64_t> shape) {
  return from_values(values, std::move(shape), "<u4");
}

std::vector<float> as_f32(const NpyArray& array) {
  const std::string& d = array.descr;
  if (d != "<f4" && d != "<f2" && d != "<f8")
    invalid(fmt::format("descr: expected '<f4', '<f2' or '<f8' for float values, got '{}'", d));
  const size_t n = array.data.size() / npy_item_size(d);
  const std::byte* p = array.data.data();
  std::vector<float> out(n);
  for (size_t i = 0; i < n; ++i) {
    if (d == "<f4") out[i] = load<float>(p + 4 * i);
    else if (d == "<f2") out[i] = reference::f16_to_float(load<uint16_t>(p + 2 * i));
    else out[i] = static_cast<float>(load<double>(p + 8 * i));
  }
  return out;
}

std::vector<uint32_t> as_u32(const NpyArray& array) {
  const std::string& d = array.descr;
  if (d == "<u4") return widen_to_u32<uint32_t>(array);
  if (d == "<i4") return widen_to_u32<int32_t>(array);
  if (d == "<u8") return widen_to_u32<uint64_t>(array);
  if (d == "<i8") return widen_to_u32<int64_t>(array);
  if (d == "|u1") return widen_to_u32<uint8_t>(array);
  if (d == "|i1") return widen_to_u32<int8_t>(array);
  invalid(fmt::format("descr: expected '<u4', '<i4', '<u8', '<i8', '|u1' or '|i1' for u32 values, got '{}'", d));
}

}  // namespace vkattn::io

// Tests of the .npy reader and writer: round trips, files laid out as NumPy
// writes them, and a clear Error for every malformed or unsupported file.

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "expect_error.hpp"
#include "io/npy.hpp"
#include "vkattn/error.hpp"

namespace vkattn::io {
namespace {

namespace fs = std::filesystem;
using vkattn::testing::expect_error;

class Npy : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("vkattn_npy_" + std::to_string(::getpid()) + "_" + info->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // Writes a file the way NumPy lays it out: magic, version, header length,
  // the dict padded with spaces and '\n' to a multiple of 64, then `data_bytes` bytes.
  std::string write_raw(const std::string& name, int major, const std::string& dict, size_t data_bytes) const {
    const size_t prefix = major == 1 ? 10 : 12;
    std::string header = dict;
    header.append(63 - (prefix + header.size()) % 64, ' ');
    header += '\n';
    std::string bytes = "\x93NUMPY";
    bytes += static_cast<char>(major);
    bytes += '\0';
    for (size_t i = 0; i < prefix - 8; ++i) bytes += static_cast<char>((header.size() >> (8 * i)) & 0xff);
    bytes += header;
    for (size_t i = 0; i < data_bytes; ++i) bytes += static_cast<char>(i);
    std::ofstream(path(name), std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return path(name);
  }

  static std::string file_bytes(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }

  fs::path dir_;
};

TEST_F(Npy, F32RoundTripWritesNumpyLayout) {
  const std::vector<float> values = {1.5f, -2.0f, 3.25f, 0.0f, 1e-8f, 7.0f};
  const auto p = path("a.npy");
  write_npy(p, npy_from_f32(values, {2, 3}));

  const std::string bytes = file_bytes(p);
  ASSERT_GE(bytes.size(), 10u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  const size_t header_len = static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8;
  EXPECT_EQ((10 + header_len) % 64, 0u);
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  EXPECT_EQ(bytes.substr(10, dict.size()), dict);
  EXPECT_EQ(bytes.find_first_not_of(' ', 10 + dict.size()), 10 + header_len - 1);  // space padding, then '\n'
  EXPECT_EQ(bytes[10 + header_len - 1], '\n');
  EXPECT_EQ(bytes.size(), 10 + header_len + 24);

  const NpyArray a = read_npy(p);
  EXPECT_EQ(a.descr, "<f4");
  EXPECT_EQ(a.shape, (std::vector<uint64_t>{2, 3}));
  EXPECT_EQ(a.elements(), 6u);
  EXPECT_EQ(as_f32(a), values);
}

TEST_F(Npy, RoundTripsOtherDtypesAndShapes) {
  const std::vector<uint32_t> u = {0, 1, 0xffffffffu};
  write_npy(path("u.npy"), npy_from_u32(u, {3}));
  EXPECT_NE(file_bytes(path("u.npy")).find("'shape': (3,), }"), std::string::npos);
  const NpyArray ua = read_npy(path("u.npy"));
  EXPECT_EQ(ua.descr, "<u4");
  EXPECT_EQ(as_u32(ua), u);

  const std::vector<double> d = {0.1, -1e300};
  write_npy(path("d.npy"), npy_from_f64(d, {1, 2, 1}));
  const NpyArray da = read_npy(path("d.npy"));
  EXPECT_EQ(da.shape, (std::vector<uint64_t>{1, 2, 1}));
  ASSERT_EQ(da.data.size(), 16u);
  double back[2];
  std::memcpy(back, da.data.data(), 16);
  EXPECT_EQ(back[0], 0.1);
  EXPECT_EQ(back[1], -1e300);
  EXPECT_EQ(as_f32(da)[0], 0.1f);

  const std::vector<float> scalar = {42.0f};
  write_npy(path("s.npy"), npy_from_f32(scalar, {}));
  const NpyArray sa = read_npy(path("s.npy"));
  EXPECT_TRUE(sa.shape.empty());
  EXPECT_EQ(as_f32(sa), scalar);

  write_npy(path("e.npy"), npy_from_f32({}, {0, 3}));
  const NpyArray ea = read_npy(path("e.npy"));
  EXPECT_EQ(ea.shape, (std::vector<uint64_t>{0, 3}));
  EXPECT_TRUE(ea.data.empty());

  NpyArray i1{"|i1", {4}, {std::byte{1}, std::byte{0x7f}, std::byte{0}, std::byte{0xff}}};
  write_npy(path("i1.npy"), i1);
  const NpyArray ia = read_npy(path("i1.npy"));
  EXPECT_EQ(ia.descr, "|i1");
  EXPECT_EQ(ia.data, i1.data);
}

TEST_F(Npy, ReadsHeadersAsNumpyAndOthersWriteThem) {
  // Version 2.0, double quotes, keys in another order, no trailing comma, '|u1'.
  const auto p2 = write_raw("v2.npy", 2, "{\"shape\": (2, 2), \"fortran_order\": False, \"descr\": \"|u1\"}", 4);
  const NpyArray a = read_npy(p2);
  EXPECT_EQ(a.descr, "|u1");
  EXPECT_EQ(as_u32(a), (std::vector<uint32_t>{0, 1, 2, 3}));

  // '<f2' data: 1.0, -2.0, 65504.
  const auto p1 = write_raw("f2.npy", 1, "{'descr': '<f2', 'fortran_order': False, 'shape': (3,), }", 0);
  std::ofstream(p1, std::ios::binary | std::ios::app).write("\x00\x3c\x00\xc0\xff\x7b", 6);
  EXPECT_EQ(as_f32(read_npy(p1)), (std::vector<float>{1.0f, -2.0f, 65504.0f}));
}

TEST_F(Npy, AsU32ChecksRange) {
  auto array = [](const char* descr, auto... values) {
    NpyArray a{descr, {sizeof...(values)}, {}};
    ((a.data.insert(a.data.end(), reinterpret_cast<const std::byte*>(&values),
                    reinterpret_cast<const std::byte*>(&values) + sizeof(values))),
     ...);
    return a;
  };
  EXPECT_EQ(as_u32(array("<i4", int32_t{7}, int32_t{0})), (std::vector<uint32_t>{7, 0}));
  EXPECT_EQ(as_u32(array("<i8", int64_t{5}, int64_t{0xffffffff})), (std::vector<uint32_t>{5, 0xffffffffu}));
  EXPECT_EQ(as_u32(array("<u8", uint64_t{9})), (std::vector<uint32_t>{9}));
  EXPECT_EQ(as_u32(array("|i1", int8_t{3})), (std::vector<uint32_t>{3}));
  expect_error([&] { as_u32(array("<i4", int32_t{1}, int32_t{-1})); }, ErrorKind::invalid_argument,
               {"data:", "-1", "element 1"});
  expect_error([&] { as_u32(array("<i8", int64_t{1} << 32)); }, ErrorKind::invalid_argument, {"data:", "4294967296"});
  expect_error([&] { as_u32(array("<u8", ~uint64_t{0})); }, ErrorKind::invalid_argument, {"data:"});
  expect_error([&] { as_u32(array("|i1", int8_t{-3})); }, ErrorKind::invalid_argument, {"data:", "-3"});
  expect_error([&] { as_u32(array("<f4", 1.0f)); }, ErrorKind::invalid_argument, {"descr:", "<f4"});
  expect_error([&] { as_f32(array("<i4", int32_t{1})); }, ErrorKind::invalid_argument, {"descr:", "<i4"});
}

TEST_F(Npy, RejectsUnsupportedLayoutsWithTheFileAndField) {
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  auto expect_io = [](const std::string& p, std::vector<std::string> parts) {
    parts.insert(parts.begin(), p);
    expect_error([&] { read_npy(p); }, ErrorKind::io, parts);
  };
  expect_io(write_raw("fortran.npy", 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", 24),
            {"fortran_order:", "True"});
  expect_io(write_raw("big.npy", 1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }", 24),
            {"descr:", "'>f4'", "little-endian"});
  expect_io(write_raw("complex.npy", 1, "{'descr': '<c8', 'fortran_order': False, 'shape': (3,), }", 24),
            {"descr:", "'<c8'"});
  expect_io(write_raw("short.npy", 1, dict, 20), {"data:", "expected 24 bytes", "got 20"});
  expect_io(write_raw("long.npy", 1, dict, 28), {"data:", "expected 24 bytes", "got 28"});
  expect_io(write_raw("v9.npy", 9, dict, 24), {"version:", "9.0"});
  expect_io(write_raw("noshape.npy", 1, "{'descr': '<f4', 'fortran_order': False, }", 0), {"shape:"});
  expect_io(write_raw("badshape.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }", 0),
            {"header:", "dimension"});
  expect_io(write_raw("extra.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), 'x': 1}", 4),
            {"header:", "'x'"});

  std::ofstream(path("magic.npy"), std::ios::binary) << "PK\x03\x04 not numpy at all";
  expect_io(path("magic.npy"), {"magic:"});
  // Cut inside the header: 8 bytes of magic and version, a length of 118, then 10 bytes.
  const std::string full = file_bytes(write_raw("whole.npy", 1, dict, 24));
  std::ofstream(path("cut.npy"), std::ios::binary) << full.substr(0, 20);
  expect_io(path("cut.npy"), {"header:", "expected 118 bytes", "got 10"});
  expect_io(path("missing.npy"), {"file:"});
}

TEST_F(Npy, WriteValidatesTheArray) {
  expect_error([&] { write_npy(path("x.npy"), NpyArray{"<f4", {2}, std::vector<std::byte>(7)}); },
               ErrorKind::invalid_argument, {"data:", "expected 8 bytes", "got 7"});
  expect_error([&] { write_npy(path("x.npy"), NpyArray{"<c8", {1}, std::vector<std::byte>(8)}); },
               ErrorKind::invalid_argument, {"descr:", "'<c8'"});
  expect_error([&] { write_npy(path("no/such/dir/x.npy"), npy_from_f32(std::vector<float>{1}, {1})); },
               ErrorKind::io, {"no/such/dir/x.npy", "file:"});
  const std::vector<float> three = {1, 2, 3};
  expect_error([&] { npy_from_f32(three, {2, 2}); }, ErrorKind::invalid_argument, {"shape:", "3", "(2, 2)"});
}

}  // namespace
}  // namespace vkattn::io

// DeviceCaps <-> JSON: round trips, an Error naming any wrong-typed field,
// and the shipped caps files (object form and `vkattn devices --json` arrays).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "vkattn/caps.hpp"
#include "vkattn/context.hpp"
#include "expect_error.hpp"
#include "test_paths.hpp"
#include "vkattn/error.hpp"

namespace vkattn {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

const std::string kLavapipe = testing::caps_path("lavapipe.json");
const std::string kNvidia = testing::caps_path("nvidia-h200.json");

// Every field away from its default, so a field dropped on either side shows.
DeviceCaps everything_set() {
  DeviceCaps c;
  c.name = "Test GPU \"quoted\" \\ name";
  c.type = "discrete";
  c.vendor = "amd";
  c.vendor_id = 0x1002;
  c.device_id = 0x744c;
  c.driver_name = "radv";
  c.driver_info = "Mesa 24";
  c.api_version = (1u << 22) | (3u << 12) | 270u;
  c.subgroup_size = 64;
  c.min_subgroup_size = 32;
  c.max_subgroup_size = 64;
  c.subgroup_basic = c.subgroup_arithmetic = c.subgroup_shuffle = c.subgroup_ballot = true;
  c.subgroup_size_control = true;
  c.shader_float16 = c.shader_int8 = c.shader_int16 = c.storage_16bit = c.storage_8bit = true;
  c.max_shared_memory_bytes = 65536;
  c.max_workgroup_invocations = 1024;
  c.max_workgroup_size[0] = 1024;
  c.max_workgroup_size[1] = 512;
  c.max_workgroup_size[2] = 64;
  c.max_workgroup_count[0] = 2147483647;
  c.max_workgroup_count[1] = 65535;
  c.max_workgroup_count[2] = 1000;
  c.max_storage_buffer_range = 4294967295ull;
  c.max_allocation_bytes = 1ull << 34;  // past 32 bits
  c.device_local_bytes = 25769803776ull;
  c.max_push_constants_bytes = 256;
  c.compute_units = 96;
  c.timestamp_period_ns = 0.8333333f;
  c.timestamps = true;
  c.pipeline_executable_info = true;
  c.cooperative_matrix_nv = true;
  c.coop_accumulator_quad = true;
  c.cooperative_matrix_shapes = {{16, 16, 16, "f16", "f16", "f32", "f32"}, {16, 8, 32, "i8", "i8", "i32", "i32"}};
  c.cooperative_matrix2_nv = true;
  c.cooperative_matrix2_max_workgroup = 256;
  return c;
}

using vkattn::testing::expect_error;

// The JSON of everything_set() with one field replaced.
std::string with_field(const std::string& key, const nlohmann::json& value) {
  auto j = nlohmann::json::parse(caps_to_json(everything_set()));
  j[key] = value;
  return j.dump();
}

class CapsFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("vkattn_caps_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  fs::path dir_;
};

TEST(CapsJson, RoundTripKeepsEveryField) {
  const DeviceCaps c = everything_set();
  const DeviceCaps back = caps_from_json(caps_to_json(c));
  EXPECT_EQ(back, c);
  EXPECT_EQ(back.name, c.name);
  EXPECT_EQ(back.max_allocation_bytes, 1ull << 34);
  EXPECT_EQ(back.max_workgroup_count[2], 1000u);
  EXPECT_EQ(back.timestamp_period_ns, 0.8333333f);
  ASSERT_EQ(back.cooperative_matrix_shapes.size(), 2u);
  EXPECT_EQ(back.cooperative_matrix_shapes[1].k, 32u);
  EXPECT_TRUE(back.has_coop_shape(16, 16, 16, "f16", "f32"));
  EXPECT_FALSE(back.has_coop_shape(16, 16, 16, "f16", "f16"));
  // Compact and indented text read back the same.
  EXPECT_EQ(caps_from_json(caps_to_json(c, -1)), c);
}

TEST(CapsJson, DefaultsRoundTripAndAbsentFieldsKeepDefaults) {
  EXPECT_EQ(caps_from_json(caps_to_json(DeviceCaps{})), DeviceCaps{});
  const DeviceCaps partial = caps_from_json(R"({"name": "x", "subgroup_size": 32})");
  EXPECT_EQ(partial.name, "x");
  EXPECT_EQ(partial.subgroup_size, 32u);
  EXPECT_EQ(partial.max_shared_memory_bytes, DeviceCaps{}.max_shared_memory_bytes);
  EXPECT_FALSE(partial.subgroup_arithmetic);
}

TEST(CapsJson, RealDeviceRoundTrips) {
  auto devices = list_devices();
  ASSERT_FALSE(devices.empty());
  for (const auto& d : devices) {
    EXPECT_EQ(caps_from_json(caps_to_json(d.caps)), d.caps) << d.caps.name;
    EXPECT_FALSE(d.caps.name.empty());
    EXPECT_GE(d.caps.subgroup_size, 1u);
  }
}

TEST(CapsJson, WrongTypedFieldIsNamed) {
  struct Bad {
    const char* key;
    nlohmann::json value;
    const char* expected;
  };
  const Bad cases[] = {
      {"subgroup_size", "8", "expected a non-negative integer, got \"8\""},
      {"max_shared_memory_bytes", -1, "expected a non-negative integer, got -1"},
      {"compute_units", 1.5, "expected a non-negative integer, got 1.5"},
      {"compute_units", 4294967296ull, "expected a non-negative integer, got 4294967296"},
      {"timestamps", 1, "expected a boolean, got 1"},
      {"subgroup_arithmetic", "true", "expected a boolean, got \"true\""},
      {"name", 7, "expected a string, got 7"},
      {"timestamp_period_ns", "1.0", "expected a number in float range, got \"1.0\""},
      {"timestamp_period_ns", 1e300, "expected a number in float range"},
      {"max_workgroup_size", nlohmann::json::array({1, "x", 3}), "expected an array of 3 non-negative integers"},
      {"max_workgroup_count", nlohmann::json::array({1, 2}), "expected an array of 3 non-negative integers"},
      {"cooperative_matrix_shapes", 5, "expected an array, got 5"},
      {"cooperative_matrix_shapes", nlohmann::json::array({{{"m", 16}}}), "expected objects with m, n, k"},
      // Out-of-range numbers are rejected before conversion (a fuzzer found
      // 1.7e72 converted to uint32_t, which is undefined behaviour).
      {"cooperative_matrix_shapes",
       nlohmann::json::array({{{"m", 1.7e72}, {"n", 16}, {"k", 16}, {"a", "f16"}, {"b", "f16"}, {"c", "f32"},
                               {"result", "f32"}}}),
       "expected objects with m, n, k (non-negative integers)"},
      {"cooperative_matrix_shapes",
       nlohmann::json::array({{{"m", 16}, {"n", -16}, {"k", 16}, {"a", "f16"}, {"b", "f16"}, {"c", "f32"},
                               {"result", "f32"}}}),
       "expected objects with m, n, k"},
  };
  for (const auto& b : cases) {
    Error e = expect_error([&] { caps_from_json(with_field(b.key, b.value)); });
    EXPECT_EQ(e.kind(), ErrorKind::io) << b.key;
    EXPECT_THAT(e.what(), HasSubstr(std::string("caps field '") + b.key + "'"));
    EXPECT_THAT(e.what(), HasSubstr(b.expected));
  }
  // 64-bit fields take values past 32 bits; 32-bit fields do not.
  EXPECT_EQ(caps_from_json(with_field("device_local_bytes", 1ull << 40)).device_local_bytes, 1ull << 40);
}

TEST(CapsJson, NotAnObjectOrNotJson) {
  Error parse = expect_error([] { caps_from_json("{\"name\": "); });
  EXPECT_EQ(parse.kind(), ErrorKind::io);
  EXPECT_THAT(parse.what(), HasSubstr("caps: expected a JSON object, got a parse error"));
  Error arr = expect_error([] { caps_from_json("[1, 2]"); });
  EXPECT_THAT(arr.what(), HasSubstr("caps: expected a JSON object"));
}

TEST_F(CapsFile, ShippedFilesLoad) {
  const DeviceCaps lp = load_caps_file(kLavapipe);
  EXPECT_EQ(lp.name, "llvmpipe (LLVM 15.0.6, 256 bits)");
  EXPECT_EQ(lp.type, "cpu");
  EXPECT_EQ(lp.max_workgroup_size[0], 1024u);
  const DeviceCaps nv = load_caps_file(kNvidia);
  EXPECT_EQ(nv.name, "NVIDIA H200");
  EXPECT_EQ(nv.vendor, "nvidia");
  EXPECT_EQ(nv.max_workgroup_count[0], 2147483647u);
  EXPECT_EQ(nv.max_storage_buffer_range, 4294967295ull);
  EXPECT_EQ(nv.cooperative_matrix_shapes.size(), 10u);
  EXPECT_TRUE(nv.has_coop_shape(16, 8, 16, "f16", "f32"));
  // Each survives a round trip through its own JSON.
  EXPECT_EQ(caps_from_json(caps_to_json(lp)), lp);
  EXPECT_EQ(caps_from_json(caps_to_json(nv)), nv);
}

TEST_F(CapsFile, DevicesJsonArrayForm) {
  // What `vkattn devices --json` prints: an array of caps objects with "index".
  auto lp = nlohmann::json::parse(caps_to_json(load_caps_file(kLavapipe)));
  auto nv = nlohmann::json::parse(caps_to_json(load_caps_file(kNvidia)));
  lp["index"] = 0;
  nv["index"] = 1;
  const std::string path = write("devices.json", nlohmann::json::array({lp, nv}).dump(2));
  EXPECT_EQ(load_caps_file(path).name, "llvmpipe (LLVM 15.0.6, 256 bits)");  // the first
  EXPECT_EQ(load_caps_file(path, 1).name, "NVIDIA H200");
  EXPECT_EQ(load_caps_file(path, 0), load_caps_file(kLavapipe));
  Error e = expect_error([&] { load_caps_file(path, 5); });
  EXPECT_EQ(e.kind(), ErrorKind::io);
  EXPECT_THAT(e.what(), HasSubstr("expected a device with index 5, got indices [0, 1]"));
  Error empty = expect_error([&] { load_caps_file(write("empty.json", "[]")); });
  EXPECT_THAT(empty.what(), HasSubstr("expected at least one device, got []"));
  // A wrong-typed field inside an element is still named.
  nv["subgroup_size"] = "big";
  Error bad = expect_error([&] { load_caps_file(write("bad.json", nlohmann::json::array({nv}).dump())); });
  EXPECT_THAT(bad.what(), HasSubstr("caps field 'subgroup_size'"));
}

TEST_F(CapsFile, MissingOrMalformedFile) {
  Error missing = expect_error([&] { load_caps_file((dir_ / "nope.json").string()); });
  EXPECT_EQ(missing.kind(), ErrorKind::io);
  EXPECT_THAT(missing.what(), HasSubstr("cannot open"));
  EXPECT_THAT(missing.what(), HasSubstr("nope.json"));
  Error garbage = expect_error([&] { load_caps_file(write("garbage.json", "not json")); });
  EXPECT_EQ(garbage.kind(), ErrorKind::io);
  EXPECT_THAT(garbage.what(), HasSubstr("garbage.json"));
}

}  // namespace
}  // namespace vkattn

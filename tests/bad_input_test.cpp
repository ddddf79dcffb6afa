// Inputs that used to crash, hang, wrap or pass silently: sizes past 64 bits,
// strided views where packed ones are read, non-regular and hostile files,
// caps that would divide by zero or spin the planners, a rejected call that
// had already recorded work, and an output file left half-written.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "expect_error.hpp"
#include "io/npy.hpp"
#include "ops/text/text_validate.hpp"
#include "ops/vision/vision_validate.hpp"
#include "planner/geometry_rules.hpp"
#include "planner/text_planner.hpp"
#include "planner/vision_planner.hpp"
#include "test_context.hpp"
#include "vk/recorder_impl.hpp"
#include "vkattn/plan.hpp"
#include "vkattn/recorder.hpp"
#include "vkattn/text.hpp"
#include "vkattn/vision.hpp"

namespace vkattn {
namespace {

using ::testing::HasSubstr;
using testing::expect_error;

// A tensor over a buffer handle no device ever sees: for checks that run before any Vulkan call.
Tensor fake(DType t, Shape shape, VkDeviceSize bytes) {
  return Tensor(nullptr, reinterpret_cast<VkBuffer>(uintptr_t{0x1000}), 0, bytes, t, std::move(shape));
}

TEST(Sizes, ShapeProductsAndByteCountsPast64BitsAreErrors) {
  Error e = expect_error([] { element_count({1ull << 32, 1ull << 32, 4}); });
  EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
  EXPECT_THAT(e.what(), HasSubstr("element count of shape [4294967296, 4294967296, 4]"));
  // 2^61 f32 elements are 2^66 bits: once wrapped to 0 bytes, so a 64-byte buffer "held" them.
  EXPECT_THAT(expect_error([] { dtype_storage_bytes(DType::f32, 1ull << 61); }).what(), HasSubstr("bytes"));
  EXPECT_THAT(expect_error([] { fake(DType::f32, {4}, 64).reshaped({1ull << 61}); }).what(), HasSubstr("bytes"));
  // Strides whose furthest element passes 2^64 once wrapped inside a 64-byte buffer.
  EXPECT_THAT(expect_error([] { fake(DType::f32, {3, 2}, 64).strided({1ull << 63, 1}); }).what(),
              HasSubstr("strides"));
}

TextAttentionParams valid_decode_params() {
  TextAttentionParams p;
  p.num_heads = 2;
  p.num_kv_heads = 1;
  p.head_dim = 8;
  p.kv_capacity = 16;
  p.kv_len = {16};
  p.start_pos = {15};
  return p;
}

TEST(Sizes, TextElementIndicesMustFit32Bits) {
  DeviceCaps caps;
  caps.max_storage_buffer_range = 1ull << 40;
  TextAttentionParams p = valid_decode_params();
  const uint64_t row = 1ull << 29;  // 16 K rows 2^29 elements apart: the last past 2^32
  TextAttentionTensors t;
  t.q = fake(DType::f32, {1, 1, 2, 8}, 64);
  t.out = fake(DType::f32, {1, 1, 2, 8}, 64);
  t.k = fake(DType::f32, {1, 16, 1, 8}, 16 * row * 4).strided({16 * row, row, 8, 1});
  t.v = fake(DType::f32, {1, 16, 1, 8}, 16 * 8 * 4);
  Error e = expect_error([&] { text::validate_tensors(p, t, caps); });
  EXPECT_THAT(e.what(), HasSubstr("k: expected element indices below 2^32"));
}

TEST(StridedViews, VisionPosEmbedAndAudioRejectThem) {
  DeviceCaps caps;
  VisionAttentionParams p;
  p.patches = 4;
  p.num_heads = 2;
  p.head_dim = 8;
  const Shape s{4, 2, 8};
  VisionAttentionTensors t{fake(DType::f32, s, 256), fake(DType::f32, s, 256), fake(DType::f32, s, 256),
                           fake(DType::f32, s, 256)};
  t.k = fake(DType::f32, s, 512).strided({32, 8, 1});  // every other patch of a wider buffer
  Error e = expect_error([&] { vision::validate(p, t, caps); });
  EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
  EXPECT_THAT(e.what(), HasSubstr("k: expected a contiguous tensor (strides [16, 8, 1]), got strides [32, 8, 1]"));
  PosEmbedParams pe{4, 8, 4, 2};
  PosEmbedTensors pt{fake(DType::f32, {4, 8}, 256).strided({16, 1}), fake(DType::f32, {2, 4, 8}, 256)};
  EXPECT_THAT(expect_error([&] { vision::validate(pe, pt, caps); }).what(), HasSubstr("hidden: expected a contiguous"));
}

TEST(Sizes, VisionProductsPast64BitsAreErrors) {
  DeviceCaps caps;
  VisionAttentionParams p;
  p.patches = 0xffffffffu;
  p.num_heads = 0xffffffffu;
  p.head_dim = 256;
  Error e = expect_error([&] { vision::validate(p, {}, caps); });
  EXPECT_THAT(e.what(), HasSubstr("patches x heads x head_dim"));
}

// ------------------------------------------------------------ planners ----

TEST(Planners, HugeLimitsAndShapesFinish) {
  EXPECT_EQ(planner::floor_pow2(0xffffffffu), 1u << 31);  // once p * 2 wrapped to 0 and looped forever
  EXPECT_EQ(planner::floor_pow2(1u << 31), 1u << 31);
  DeviceCaps caps;
  caps.max_workgroup_invocations = 0xffffffffu;
  caps.max_shared_memory_bytes = 0xffffffffu;
  caps.max_workgroup_count[0] = caps.max_workgroup_count[1] = caps.max_workgroup_count[2] = 0xffffffffu;
  planner::TextShape prefill{1, 0xffffffffu, 8, 8, 64, 0xffffffffu, DType::f32, DType::f32};
  EXPECT_FALSE(planner::plan_text(caps, prefill).variant->name.empty());
  planner::TextShape decode{0xffffffffu, 1, 8, 8, 64, 0xffffffffu, DType::f32, DType::f32};
  auto d = planner::plan_text(caps, decode);
  EXPECT_GE(d.geometry.splits, 1u);
  planner::VisionShape v{0xffffffffu, 0xffffffffu, 64, DType::f32, VisionLayout::phd};
  EXPECT_FALSE(planner::plan_vision(caps, v).variant->name.empty());
}

TEST(Planners, VisionWithoutPatchesOrHeadsIsAnError) {
  DeviceCaps caps;
  EXPECT_THAT(expect_error([&] { planner::plan_vision(caps, {0, 12, 64, DType::f32, VisionLayout::phd}); }).what(),
              HasSubstr("patches: expected >= 1, got 0"));
  EXPECT_THAT(expect_error([&] { planner::plan_vision(caps, {16, 0, 64, DType::f32, VisionLayout::phd}); }).what(),
              HasSubstr("num_heads: expected >= 1, got 0"));
}

// --------------------------------------------------------------- files ----

class HostileFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("vkattn_bad_input_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const auto path = dir_ / name;
    std::ofstream(path, std::ios::binary) << text;
    return path.string();
  }
  std::string fifo(const std::string& name) {
    const auto path = (dir_ / name).string();
    EXPECT_EQ(mkfifo(path.c_str(), 0600), 0);
    return path;
  }
  std::filesystem::path dir_;
};

TEST_F(HostileFiles, CapsAndNpyReadersRefuseNonRegularFiles) {
  // Each of these once blocked forever (a FIFO with no writer) or read without end (/dev/zero).
  for (const std::string& path : {fifo("caps.fifo"), std::string("/dev/zero"), dir_.string()}) {
    Error caps = expect_error([&] { load_caps_file(path); });
    EXPECT_EQ(caps.kind(), ErrorKind::io);
    EXPECT_THAT(caps.what(), HasSubstr("expected a regular file"));
    Error npy = expect_error([&] { io::read_npy(path); });
    EXPECT_EQ(npy.kind(), ErrorKind::io);
    EXPECT_THAT(npy.what(), HasSubstr("expected a regular file"));
  }
}

TEST_F(HostileFiles, DeeplyNestedCapsFileIsAnErrorNotAStackOverflow) {
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  Error e = expect_error([&] { load_caps_file(write("deep.json", deep)); });
  EXPECT_EQ(e.kind(), ErrorKind::io);
  EXPECT_THAT(e.what(), HasSubstr("nested at most"));
  EXPECT_THAT(expect_error([&] { caps_from_json("{\"name\": " + deep + "}"); }).what(), HasSubstr("nested at most"));
}

TEST_F(HostileFiles, CapsWithZeroLimitsAreRejected) {
  for (const char* field : {"max_workgroup_invocations", "max_shared_memory_bytes", "subgroup_size"}) {
    Error e = expect_error([&] { caps_from_json(fmt::format("{{\"{}\": 0}}", field)); });
    EXPECT_EQ(e.kind(), ErrorKind::io);
    EXPECT_THAT(e.what(), HasSubstr(fmt::format("caps field '{}': expected >= 1, got 0", field)));
  }
  Error wg = expect_error([&] { caps_from_json("{\"max_workgroup_count\": [65535, 0, 65535]}"); });
  EXPECT_THAT(wg.what(), HasSubstr("max_workgroup_count[1]"));
}

TEST_F(HostileFiles, NpyHeaderSizeAndRankAreCapped) {
  std::string huge_len = "\x93NUMPY";
  huge_len += std::string("\x02\x00", 2) + std::string("\xff\xff\xff\x7f", 4);
  Error e = expect_error([&] { io::parse_npy(huge_len, "huge.npy"); });
  EXPECT_THAT(e.what(), HasSubstr("header: expected at most 1048576 bytes"));
  std::string dims = "(";
  for (int i = 0; i < 70; ++i) dims += "1,";
  const std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + dims + "), }";
  std::string many = "\x93NUMPY";
  many += std::string("\x01\x00", 2);
  many += static_cast<char>(header.size() & 0xff);
  many += static_cast<char>(header.size() >> 8);
  many += header + std::string(4, '\0');
  EXPECT_THAT(expect_error([&] { io::parse_npy(many, "many.npy"); }).what(), HasSubstr("at most 64 dimensions"));
}

TEST_F(HostileFiles, FailedNpyWriteLeavesTheOldFile) {
  const std::string path = (dir_ / "out.npy").string();
  const std::vector<float> old = {1, 2, 3};
  io::write_npy(path, io::npy_from_f32(old, {3}));
  // A file-size limit makes the next write fail part-way, as a full disk would.
  rlimit saved{};
  getrlimit(RLIMIT_FSIZE, &saved);
  auto* previous = signal(SIGXFSZ, SIG_IGN);
  rlimit small = saved;
  small.rlim_cur = 4096;
  setrlimit(RLIMIT_FSIZE, &small);
  const std::vector<float> big(100000, 5.0f);
  Error e = expect_error([&] { io::write_npy(path, io::npy_from_f32(big, {big.size()})); });
  setrlimit(RLIMIT_FSIZE, &saved);
  signal(SIGXFSZ, previous);
  EXPECT_EQ(e.kind(), ErrorKind::io);
  EXPECT_EQ(io::as_f32(io::read_npy(path)), old);
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir_)) files += entry.is_regular_file();
  EXPECT_EQ(files, 1u) << "a temporary file was left behind";
}

// ------------------------------------------------------------ recording ----

class RejectedCalls : public testing::GpuTest {};

// Per-sequence host values are written into scratch by the command buffer; a
// call that a later check rejects must not have recorded that write.
TEST_F(RejectedCalls, RecordNothing) {
  Context& c = ctx();
  TextAttentionParams p = valid_decode_params();
  p.batch = 16384;
  p.kv_len.assign(p.batch, 16);
  p.kv_len[0] = 15;
  p.start_pos.assign(p.batch, 15);
  TextAttentionTensors t;
  t.q = c.tensor(DType::f32, {p.batch, 1, 2, 8});
  t.out = c.tensor(DType::f32, {p.batch, 1, 2, 8});
  t.k = c.tensor(DType::f32, {p.batch, 16, 1, 8});
  t.v = c.tensor(DType::f32, {p.batch, 16, 1, 8});
  PlanOptions o;
  o.variant = "decode_split_f32";
  o.strict = true;
  o.splits = 5;  // 5 x 16384 workgroups: past the 65535 a dimension may have
  if (c.caps().max_workgroup_count[2] >= 5u * p.batch) GTEST_SKIP() << "the device takes this grid";
  Recorder rec(c);
  Error e = expect_error([&] { text_attention(rec, p, t, o); });
  EXPECT_EQ(e.kind(), ErrorKind::unsupported);
  EXPECT_THAT(e.what(), HasSubstr("workgroups[2]"));
  EXPECT_EQ(rec.impl().scratch_count(), 0u);
  EXPECT_EQ(rec.impl().dispatch_count(), 0u);
}

}  // namespace
}  // namespace vkattn

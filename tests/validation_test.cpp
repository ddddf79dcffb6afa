// Every text-attention argument error by name: each test starts from a call
// that runs (Baseline proves it) and breaks one thing; the Error must say
// which parameter, what was expected and what was given, and nothing may be
// recorded. Device choice is tested on synthetic device lists.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "expect_error.hpp"
#include "test_context.hpp"
#include "vk/recorder_impl.hpp"
#include "vkattn/error.hpp"
#include "vkattn/plan.hpp"
#include "vkattn/recorder.hpp"
#include "vkattn/text.hpp"

namespace vkattn {
namespace {

using ::testing::HasSubstr;

using testing::expect_error;

class Validation : public testing::GpuTest {
 protected:
  // B2 decode, H4/2, D64, 16 cache slots (or 4 pages of 4), f32.
  void SetUp() override {
    GpuTest::SetUp();
    p.batch = 2;
    p.seq_len = 1;
    p.num_heads = 4;
    p.num_kv_heads = 2;
    p.head_dim = 64;
    p.kv_capacity = 16;
    p.kv_len = {16};
    p.start_pos = {15};
    make_tensors(DType::f32, DType::f32);
  }

  void make_paged() {
    p.layout = KvLayout::paged;
    p.kv_capacity = 4;  // page size
    p.max_pages = 4;
    p.num_pages = 6;
    make_tensors(t.q.dtype(), t.k.dtype());
    t.page_table = ctx().tensor(DType::u32, {p.batch, p.max_pages});
    ctx().upload(t.page_table, std::vector<uint32_t>{0, 1, 2, 3, 5, 4, 3, 2});
  }

  void make_tensors(DType q, DType kv) {
    const Shape qs{p.batch, p.seq_len, p.num_heads, p.head_dim};
    const Shape kvs = p.layout == KvLayout::paged ? Shape{p.num_pages, p.kv_capacity, p.num_kv_heads, p.head_dim}
                                                  : Shape{p.batch, p.kv_capacity, p.num_kv_heads, p.head_dim};
    t.q = ctx().tensor(q, qs);
    t.out = ctx().tensor(q, qs);
    t.k = ctx().tensor(kv, kvs);
    t.v = ctx().tensor(kv, kvs);
  }

  // Records the call into a fresh recorder; on an Error nothing may have been recorded.
  void record(const PlanOptions& o = {}) {
    Recorder rec(ctx());
    try {
      text_attention(rec, p, t, o);
    } catch (...) {
      EXPECT_EQ(rec.impl().dispatch_count(), 0u) << "a rejected call recorded a dispatch";
      throw;
    }
  }
  void expect(ErrorKind kind, std::vector<std::string> pieces, const PlanOptions& o = {}) {
    expect_error([&] { record(o); }, kind, std::move(pieces));
  }

  TextAttentionParams p;
  TextAttentionTensors t;
};

TEST_F(Validation, BaselineCallsAreValidForEveryLayout) {
  // The starting points of the tests below run; each test breaks one thing.
  Recorder rec(ctx());
  text_attention(rec, p, t);
  EXPECT_GE(rec.impl().dispatch_count(), 1u);
  p.layout = KvLayout::ring;
  p.kv_start = {100};  // ring positions wrap
  p.start_pos = {115};
  text_attention(rec, p, t);
  EXPECT_GE(rec.impl().dispatch_count(), 2u);
  rec.run();
  p.kv_start = {0};
  p.start_pos = {15};
  make_paged();  // replaces the tensors the first recording used, after it ran
  p.kv_len = {16, 9};
  Recorder paged(ctx());
  text_attention(paged, p, t);
  EXPECT_GE(paged.impl().dispatch_count(), 1u);
  paged.run();
}

TEST_F(Validation, HeadsNotMultipleOfKvHeads) {
  p.num_heads = 6;
  p.num_kv_heads = 4;
  make_tensors(DType::f32, DType::f32);
  expect(ErrorKind::invalid_argument, {"num_heads", "multiple of num_kv_heads (4)", "got 6"});
  p.num_kv_heads = 0;
  expect(ErrorKind::invalid_argument, {"num_kv_heads: expected >= 1, got 0"});
}

TEST_F(Validation, HeadDimZeroUnalignedOrTooLarge) {
  for (uint32_t d : {0u, 12u, 520u}) {
    p.head_dim = d;
    make_tensors(DType::f32, DType::f32);
    expect(ErrorKind::invalid_argument, {"head_dim", "multiple of 8 in [8, 512]", "got " + std::to_string(d)});
  }
}

TEST_F(Validation, BatchAndSeqLenZero) {
  p.batch = 0;
  expect(ErrorKind::invalid_argument, {"batch: expected >= 1, got 0"});
  p.batch = 2;
  p.seq_len = 0;
  expect(ErrorKind::invalid_argument, {"seq_len: expected >= 1, got 0"});
}

TEST_F(Validation, QShapeDoesNotMatch) {
  t.q = ctx().tensor(DType::f32, {2, 1, 4, 32});
  expect(ErrorKind::invalid_argument, {"q: expected shape [2, 1, 4, 64], got [2, 1, 4, 32]"});
  t.q = ctx().tensor(DType::f32, {2, 1, 2, 128});  // same element count, other shape
  expect(ErrorKind::invalid_argument, {"q: expected shape [2, 1, 4, 64], got [2, 1, 2, 128]"});
}

TEST_F(Validation, KAndVShapesDoNotMatch) {
  Tensor good_k = t.k;
  t.k = ctx().tensor(DType::f32, {2, 15, 2, 64});
  expect(ErrorKind::invalid_argument, {"k: expected shape [2, 16, 2, 64], got [2, 15, 2, 64]"});
  t.k = good_k;
  t.v = ctx().tensor(DType::f32, {2, 16, 4, 64});
  expect(ErrorKind::invalid_argument, {"v: expected shape [2, 16, 2, 64], got [2, 16, 4, 64]"});
}

TEST_F(Validation, OutShapeAndPresence) {
  t.out = ctx().tensor(DType::f32, {2, 2, 4, 64});
  expect(ErrorKind::invalid_argument, {"out: expected shape [2, 1, 4, 64], got [2, 2, 4, 64]"});
  t.out = Tensor();
  expect(ErrorKind::invalid_argument, {"out: expected a tensor of shape [2, 1, 4, 64], got none"});
}

TEST_F(Validation, BufferSmallerThanItsShape) {
  // A hand-made view claiming fewer bytes than its shape holds.
  t.q = Tensor(nullptr, t.q.buffer(), 0, 100, DType::f32, {2, 1, 4, 64});
  expect(ErrorKind::invalid_argument, {"q: expected at least 2048 bytes, got 100"});
  // wrap() refuses such a view up front.
  expect_error([&] { ctx().wrap(t.k.buffer(), 0, 100, DType::f32, {2, 16, 2, 64}); }, ErrorKind::invalid_argument,
               {"bytes: expected at least 16384", "got 100"});
}

TEST_F(Validation, NonFloatQueryOrOutput) {
  t.q = ctx().tensor(DType::u32, {2, 1, 4, 64});
  expect(ErrorKind::invalid_argument, {"q: expected dtype f32, f16 or bf16, got u32"});
}

TEST_F(Validation, KvLenBufferShapeAndDtype) {
  t.kv_len = ctx().tensor(DType::u32, {3});
  expect(ErrorKind::invalid_argument, {"kv_len: expected shape [2], got [3]"});
  t.kv_len = ctx().tensor(DType::f32, {2});
  expect(ErrorKind::invalid_argument, {"kv_len: expected dtype u32, got f32"});
  t.kv_len = Tensor();
  t.start_pos = ctx().tensor(DType::u32, {1});
  expect(ErrorKind::invalid_argument, {"start_pos: expected shape [2], got [1]"});
}

TEST_F(Validation, PageTableShapeAndPresence) {
  make_paged();
  t.page_table = ctx().tensor(DType::u32, {2, 3});
  expect(ErrorKind::invalid_argument, {"page_table: expected shape [2, 4], got [2, 3]"});
  t.page_table = Tensor();
  expect(ErrorKind::invalid_argument, {"page_table: expected a tensor of shape [2, 4], got none"});
  t.page_table = ctx().tensor(DType::f32, {2, 4});
  expect(ErrorKind::invalid_argument, {"page_table: expected dtype u32, got f32"});
}

TEST_F(Validation, PagedPoolShape) {
  make_paged();
  t.k = ctx().tensor(DType::f32, {2, 16, 2, 64});  // contiguous shape given to a paged call
  expect(ErrorKind::invalid_argument, {"k: expected shape [6, 4, 2, 64], got [2, 16, 2, 64]"});
}

TEST_F(Validation, KvDtypeMismatch) {
  t.k = ctx().tensor(DType::f16, {2, 16, 2, 64});
  expect(ErrorKind::invalid_argument, {"v: expected the dtype of k (f16), got f32"});
}

TEST_F(Validation, HalfQueryWithOtherKvDtype) {
  make_tensors(DType::f16, DType::bf16);
  expect(ErrorKind::invalid_argument, {"k: expected f16", "got bf16"});
  make_tensors(DType::bf16, DType::f32);
  expect(ErrorKind::invalid_argument, {"k: expected bf16", "got f32"});
}

TEST_F(Validation, KvLenPastContiguousCapacity) {
  p.kv_len = {17};
  expect(ErrorKind::invalid_argument, {"kv_len", "kv_capacity (16)", "got 0 + 17 for sequence 0"});
  p.kv_len = {16, 13};
  p.kv_start = {0, 4};
  expect(ErrorKind::invalid_argument, {"kv_len", "kv_capacity (16)", "got 4 + 13 for sequence 1"});
}

TEST_F(Validation, KvLenPastRingSize) {
  p.layout = KvLayout::ring;
  p.kv_len = {17};
  expect(ErrorKind::invalid_argument, {"kv_len: expected <= kv_capacity (16, the ring size), got 17"});
}

TEST_F(Validation, KvLenPastPagedCapacity) {
  make_paged();
  p.kv_len = {16, 17};
  expect(ErrorKind::invalid_argument, {"kv_len", "max_pages * page_size (16)", "got 17 for sequence 1"});
}

TEST_F(Validation, PagedZeroPageSizeAndCounts) {
  make_paged();
  p.kv_capacity = 0;
  expect(ErrorKind::invalid_argument, {"kv_capacity: expected >= 1 (the page size), got 0"});
  p.kv_capacity = 4;
  p.num_pages = 0;
  expect(ErrorKind::invalid_argument, {"num_pages: expected >= 1, got 0"});
  p.num_pages = 6;
  p.max_pages = 0;
  expect(ErrorKind::invalid_argument, {"max_pages: expected >= 1, got 0"});
}

TEST_F(Validation, ContiguousZeroCapacity) {
  p.kv_capacity = 0;
  p.kv_len = {0};
  expect(ErrorKind::invalid_argument, {"kv_capacity: expected >= 1 (cache slots per sequence), got 0"});
}

TEST_F(Validation, PageTableEntriesOutOfRange) {
  make_paged();
  p.kv_len = {16, 9};  // sequence 1 uses pages 0..2 of its row
  std::vector<uint32_t> table{0, 1, 2, 3, 5, 4, 3, 2};
  check_page_table(p, table);
  table[6] = 6;  // row 1, entry 2 = num_pages
  expect_error([&] { check_page_table(p, table); }, ErrorKind::invalid_argument,
               {"page_table[1][2]", "below num_pages (6)", "got 6"});
  table[6] = 3;
  table[7] = 0xffffffffu;  // past sequence 1's keys: never read, so allowed
  check_page_table(p, table);
  p.kv_start = {0, 4};  // now keys 4..12 reach entry 3
  expect_error([&] { check_page_table(p, table); }, ErrorKind::invalid_argument,
               {"page_table[1][3]", "below num_pages (6)", "got 4294967295"});
  table.pop_back();
  expect_error([&] { check_page_table(p, table); }, ErrorKind::invalid_argument,
               {"page_table: expected batch x max_pages = 8 entries, got 7"});
}

TEST_F(Validation, PerSequenceVectorsOfWrongLength) {
  p.kv_len = {1, 2, 3};
  expect(ErrorKind::invalid_argument, {"kv_len: expected 1 or batch (2) values, got 3"});
  p.kv_len = {16};
  p.start_pos = {};
  expect(ErrorKind::invalid_argument, {"start_pos: expected 1 or batch (2) values, got 0"});
  p.start_pos = {15};
  p.kv_start = {0, 0, 0};
  expect(ErrorKind::invalid_argument, {"kv_start: expected 1 or batch (2) values, got 3"});
}

TEST_F(Validation, ScaleAndSoftcapMustBeFinite) {
  p.softcap = -1.0f;
  expect(ErrorKind::invalid_argument, {"softcap: expected >= 0 (0 = off), got -1"});
  p.softcap = 0.0f;
  p.scale = std::numeric_limits<float>::infinity();
  expect(ErrorKind::invalid_argument, {"scale: expected a finite number, got inf"});
}

TEST_F(Validation, PositionsPast2To31) {
  p.start_pos = {0x7fffffffu};
  expect(ErrorKind::invalid_argument, {"start_pos: expected start_pos + seq_len < 2^31, got 2147483647"});
}

TEST_F(Validation, ForcedVariantCannotTakeHeadDimStrict) {
  p.batch = 1;
  p.seq_len = 8;
  p.head_dim = 128;
  p.kv_len = {16};
  p.start_pos = {8};
  p.causal = true;
  make_tensors(DType::f32, DType::f32);
  PlanOptions o;
  o.variant = "prefill_tiled_large_f32";
  o.strict = true;
  expect(ErrorKind::unsupported, {"prefill_tiled_large_f32", "needs head_dim <= 64, got 128"}, o);
  // Non-strict: falls back and says so.
  Recorder rec(ctx());
  o.strict = false;
  TextCallInfo info = text_attention(rec, p, t, o);
  EXPECT_EQ(info.variant, "prefill_tiled_small_f32");
  ASSERT_EQ(info.warnings.size(), 1u);
  EXPECT_THAT(info.warnings[0], HasSubstr("prefill_tiled_large_f32"));
}

TEST_F(Validation, UnknownVariantStrict) {
  PlanOptions o;
  o.variant = "decode_nosuch_f32";
  o.strict = true;
  expect(ErrorKind::invalid_argument, {"variant", "'decode_nosuch_f32'"}, o);
}

// ---- device choice (pure; synthetic lists) ---------------------------------

std::vector<DeviceInfo> devices(std::vector<std::pair<std::string, std::string>> name_type) {
  std::vector<DeviceInfo> out;
  for (uint32_t i = 0; i < name_type.size(); ++i) {
    DeviceInfo d;
    d.index = i;
    d.caps.name = name_type[i].first;
    d.caps.type = name_type[i].second;
    out.push_back(d);
  }
  return out;
}

TEST(ValidationDevice, AutoPrefersDiscreteIntegratedVirtualCpu) {
  auto all = devices({{"llvmpipe (LLVM 15)", "cpu"},
                      {"virtio-gpu", "virtual"},
                      {"Intel UHD 770", "integrated"},
                      {"NVIDIA H200", "discrete"}});
  EXPECT_EQ(choose_device(all, "auto"), 3u);
  EXPECT_EQ(choose_device(all, ""), 3u);
  all.pop_back();
  EXPECT_EQ(choose_device(all, "auto"), 2u);
  all.pop_back();
  EXPECT_EQ(choose_device(all, "auto"), 1u);
  all.pop_back();
  EXPECT_EQ(choose_device(all, "auto"), 0u);
  // Ties keep the first.
  EXPECT_EQ(choose_device(devices({{"a", "cpu"}, {"b", "discrete"}, {"c", "discrete"}}), "auto"), 1u);
}

TEST(ValidationDevice, CpuAndGpuSelectors) {
  auto all = devices({{"NVIDIA H200", "discrete"}, {"llvmpipe", "cpu"}, {"Intel UHD", "integrated"}});
  EXPECT_EQ(choose_device(all, "cpu"), 1u);
  EXPECT_EQ(choose_device(all, "gpu"), 0u);
  EXPECT_EQ(choose_device(all, "GPU"), 0u);
  expect_error([] { choose_device(devices({{"llvmpipe", "cpu"}}), "gpu"); }, ErrorKind::invalid_argument,
               {"device: expected", "0: llvmpipe (cpu)", "got 'gpu'"});
}

TEST(ValidationDevice, IndexAndRange) {
  auto all = devices({{"llvmpipe", "cpu"}, {"NVIDIA H200", "discrete"}});
  EXPECT_EQ(choose_device(all, "0"), 0u);
  EXPECT_EQ(choose_device(all, "1"), 1u);
  expect_error([&] { choose_device(all, "2"); }, ErrorKind::invalid_argument,
               {"device: expected an index below 2, got 2", "1: NVIDIA H200 (discrete)"});
}

TEST(ValidationDevice, NameSubstringIsCaseInsensitive) {
  auto all = devices({{"llvmpipe (LLVM 15.0.6, 256 bits)", "cpu"}, {"NVIDIA H200", "discrete"}});
  EXPECT_EQ(choose_device(all, "h200"), 1u);
  EXPECT_EQ(choose_device(all, "LLVMPIPE"), 0u);
  EXPECT_EQ(choose_device(all, "Nvidia"), 1u);
  expect_error([&] { choose_device(all, "Radeon"); }, ErrorKind::invalid_argument,
               {"device: expected auto, cpu, gpu, an index or a name substring", "NVIDIA H200", "got 'Radeon'"});
}

TEST(ValidationDevice, EmptyListIsNoDevice) {
  expect_error([] { choose_device({}, "auto"); }, ErrorKind::no_device,
               {"device: expected at least one Vulkan device, got none", "mesa-vulkan-drivers"});
}

TEST_F(Validation, UnknownDeviceNameForContext) {
  ContextOptions o;
  o.device = "no-such-gpu-xyz";
  o.validation = 0;
  expect_error([&] { Context c(o); }, ErrorKind::invalid_argument, {"device: expected", "got 'no-such-gpu-xyz'"});
}

}  // namespace
}  // namespace vkattn

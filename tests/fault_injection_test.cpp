// Injected Vulkan faults (vk/fault_injection.hpp): each surfaces as a typed
// error naming what failed, leaks nothing (vkattn allocations are counted;
// the validation layer reports any Vulkan object left at device destruction),
// the context keeps working after out-of-memory, and after device loss every
// call fails fast with device_lost. Then a bounded soak.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <optional>

#include "check/text_cases.hpp"
#include "expect_error.hpp"
#include "test_context.hpp"
#include "vk/allocation.hpp"
#include "vk/check.hpp"
#include "vk/fault_injection.hpp"
#include "vkattn/plan.hpp"
#include "vkattn/recorder.hpp"
#include "vkattn/text.hpp"

namespace vkattn {
namespace {

using ::testing::HasSubstr;
using testing::expect_error;
using vk::FaultSite;

check::TextCase small_decode(const std::string& variant = "decode_split_f32") {
  check::TextCase c;
  auto& p = c.params;
  p.batch = 2;
  p.num_heads = 4;
  p.num_kv_heads = 2;
  p.head_dim = 64;
  p.kv_capacity = 48;
  p.kv_len = {48, 30};
  p.start_pos = {47, 29};
  c.variant = variant;
  c.gpu_kv_len = true;
  return c;
}

// Each test gets its own context, so an injected device loss stays in it.
class Faults : public testing::GpuTest {
 protected:
  void TearDown() override {
    vk::disarm_faults();
    testing::GpuTest::TearDown();
  }
};

struct Case {
  FaultSite site;
  VkResult result;
  ErrorKind kind;
  const char* names;  // what the message must say failed
};

// Unfilled decode tensors for `p`.
TextAttentionTensors decode_tensors(Context& c, const TextAttentionParams& p) {
  TextAttentionTensors t;
  t.q = c.tensor(DType::f32, {p.batch, 1, p.num_heads, p.head_dim});
  t.out = c.tensor(DType::f32, {p.batch, 1, p.num_heads, p.head_dim});
  t.k = c.tensor(DType::f32, {p.batch, p.kv_capacity, p.num_kv_heads, p.head_dim});
  t.v = c.tensor(DType::f32, {p.batch, p.kv_capacity, p.num_kv_heads, p.head_dim});
  return t;
}

// One decode call straight through the public API (errors propagate): tensors,
// uploads, pipelines, record, submit, wait.
void run_call(Context& c, const std::string& variant) {
  const TextAttentionParams p = small_decode().params;
  TextAttentionTensors t = decode_tensors(c, p);
  c.upload(t.k, std::vector<float>(p.batch * p.kv_capacity * p.num_kv_heads * p.head_dim, 0.5f));
  run_text_attention(c, p, t, testing::forced(variant));
}

TEST_F(Faults, OutOfMemoryIsTypedLeaksNothingAndTheContextRecovers) {
  const Case cases[] = {
      {FaultSite::allocation, VK_ERROR_OUT_OF_DEVICE_MEMORY, ErrorKind::out_of_memory, "allocating"},
      {FaultSite::allocation, VK_ERROR_OUT_OF_HOST_MEMORY, ErrorKind::out_of_memory, "allocating"},
      {FaultSite::pipeline_creation, VK_ERROR_OUT_OF_HOST_MEMORY, ErrorKind::out_of_memory,
       "creating the compute pipeline"},
      {FaultSite::submit, VK_ERROR_OUT_OF_DEVICE_MEMORY, ErrorKind::out_of_memory, "submitting"},
      {FaultSite::fence_wait, VK_ERROR_OUT_OF_HOST_MEMORY, ErrorKind::out_of_memory, "waiting for"},
  };
  int fired = 0;
  for (const Case& f : cases) {
    const int64_t live_before = vk::Allocation::live();
    {
      Context c;
      // The Nth call at the site, early and late in a call (a split call makes two pipelines).
      for (uint32_t nth = 1; nth <= 4; ++nth) {
        const std::string what = fmt::format("{} #{} {}", to_string(f.site), nth, vk::result_name(f.result));
        vk::arm_fault(f.site, nth, f.result);
        std::optional<Error> error;
        try {
          run_call(c, "decode_split_f32");
        } catch (const Error& e) {
          error = e;
        }
        const bool hit = vk::fault_fired();
        vk::disarm_faults();
        if (!hit) {
          EXPECT_FALSE(error) << what << ": " << error->what();
          continue;  // the call made fewer than nth such calls
        }
        ++fired;
        ASSERT_TRUE(error) << what << ": the injected fault was swallowed";
        EXPECT_EQ(error->kind(), f.kind) << what;
        EXPECT_THAT(error->what(), HasSubstr(f.names)) << what;
        EXPECT_THAT(error->what(), HasSubstr(std::string(vk::result_name(f.result)))) << what;
        // The same context runs the next call correctly.
        check::CheckResult next = check::run_text_case(c, small_decode());
        EXPECT_TRUE(next.passed) << what << ": " << next.error << " " << reference::to_string(next.cmp, next.tol);
      }
    }
    EXPECT_EQ(vk::Allocation::live(), live_before) << to_string(f.site) << ": allocations leaked";
  }
  EXPECT_GE(fired, 10);
  RecordProperty("faults_fired", fired);
}

TEST_F(Faults, KindsOfErrors) {
  Context c;
  vk::arm_fault(FaultSite::allocation, 1, VK_ERROR_OUT_OF_DEVICE_MEMORY);
  Error oom = expect_error([&] { c.tensor(DType::f32, {1024}); });
  EXPECT_EQ(oom.kind(), ErrorKind::out_of_memory);
  EXPECT_THAT(oom.what(), HasSubstr("allocating"));
  vk::arm_fault(FaultSite::submit, 1, VK_ERROR_DEVICE_LOST);
  Tensor t = c.tensor(DType::f32, {1024});
  Error lost = expect_error([&] { c.upload(t, std::vector<float>(1024, 1.0f)); });
  EXPECT_EQ(lost.kind(), ErrorKind::device_lost);
  EXPECT_THAT(lost.what(), HasSubstr("submitting a transfer"));
}

TEST_F(Faults, AfterDeviceLossEveryCallFailsFast) {
  for (FaultSite site : {FaultSite::submit, FaultSite::fence_wait}) {
    const int64_t live_before = vk::Allocation::live();
    {
      Context c;
      check::TextCase tc = small_decode();
      ASSERT_TRUE(check::run_text_case(c, tc).passed);
      const TextAttentionParams p = tc.params;
      TextAttentionTensors t = decode_tensors(c, p);  // made before the loss, recorded after it
      vk::arm_fault(site, 1, VK_ERROR_DEVICE_LOST);
      Error first = expect_error([&] { run_call(c, "decode_split_f32"); });
      EXPECT_EQ(first.kind(), ErrorKind::device_lost) << to_string(site);
      EXPECT_THAT(first.what(), HasSubstr("VK_ERROR_DEVICE_LOST")) << to_string(site);
      vk::disarm_faults();
      const auto start = std::chrono::steady_clock::now();
      Error alloc = expect_error([&] { c.tensor(DType::f32, {16}); });
      Error down = expect_error([&] { std::vector<std::byte> b(t.q.bytes()); c.download(t.q, b); });
      Error call = expect_error([&] {
        Recorder rec(c);
        text_attention(rec, p, t);
        rec.run();
      });
      for (const Error* e : {&alloc, &down, &call}) {
        EXPECT_EQ(e->kind(), ErrorKind::device_lost) << e->what();
        EXPECT_THAT(e->what(), HasSubstr("lost")) << e->what();
      }
      EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2)) << "device loss must fail fast";
    }
    EXPECT_EQ(vk::Allocation::live(), live_before);
  }
}

// A wait past the fence timeout (injected as VK_TIMEOUT) is device loss, not a hang.
TEST_F(Faults, FenceTimeoutIsDeviceLost) {
  Context c;
  vk::arm_fault(FaultSite::fence_wait, 1, VK_TIMEOUT);
  Error e = expect_error([&] { run_call(c, "decode_split_f32"); });
  vk::disarm_faults();
  EXPECT_EQ(e.kind(), ErrorKind::device_lost);
  EXPECT_THAT(e.what(), HasSubstr("not finished after 120000 ms (VK_TIMEOUT)"));
  EXPECT_EQ(expect_error([&] { c.tensor(DType::f32, {16}); }).kind(), ErrorKind::device_lost);
}

// AddressSanitizer holds freed memory in quarantine, so resident memory says
// nothing about leaks there (LeakSanitizer checks at exit instead).
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kResidentMemoryMeaningful = false;
#else
constexpr bool kResidentMemoryMeaningful = true;
#endif

// Resident set size in KiB (/proc/self/statm counts pages).
int64_t rss_kib() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

// Bounded soak: thousands of replays of one recording, and contexts created
// and destroyed, with vkattn's allocations and the resident set flat.
TEST_F(Faults, SoakReplayAndContextCyclesStayFlat) {
  Context& c = ctx();
  check::TextCase tc = small_decode();
  ASSERT_TRUE(check::run_text_case(c, tc).passed);
  TextAttentionParams p = tc.params;
  TextAttentionTensors t = decode_tensors(c, p);
  Recorder rec(c);
  text_attention(rec, p, t);
  for (int i = 0; i < 50; ++i) rec.run();  // warm-up: pools and caches reach their size
  const int64_t live = vk::Allocation::live(), rss = rss_kib();
  for (int i = 0; i < 3000; ++i) rec.run();
  EXPECT_EQ(vk::Allocation::live(), live);
  if (kResidentMemoryMeaningful) EXPECT_LT(rss_kib() - rss, 2048) << "resident memory grew over 3000 replays";

  auto context_cycle = [&] {
    Context fresh;
    Recorder r(fresh);
    TextAttentionTensors ft = decode_tensors(fresh, p);
    text_attention(r, p, ft);
    r.run();
  };
  // The same cycles first, so the loader, the driver's compiler and the heap
  // reach their steady state before the measurement.
  for (int i = 0; i < 3; ++i) context_cycle();
  const int64_t ctx_rss = rss_kib();
  for (int i = 0; i < 20; ++i) context_cycle();
  EXPECT_EQ(vk::Allocation::live(), live);
  // vkattn's own allocations must return exactly (above); the resident set
  // gets a bound loose enough for heap fragmentation under a loaded machine
  // (8 MiB was exceeded once, by 112 KiB) and tight enough for a leak that grows every cycle.
  if (kResidentMemoryMeaningful) EXPECT_LT(rss_kib() - ctx_rss, 16384) << "resident memory grew over 20 context cycles";
}

}  // namespace
}  // namespace vkattn

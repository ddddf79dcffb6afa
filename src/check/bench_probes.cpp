#include "check/bench_probes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <vector>

#include "check/timing.hpp"
#include "reference/rounding.hpp"
#include "shaders/bench_interface.h"
#include "vk/recorder_impl.hpp"
#include "vk/runtime.hpp"
#include "vkattn/error.hpp"

namespace vkattn::check {

namespace {

uint32_t fill_type(DType t) {
  switch (t) {
    case DType::f16: return DTYPE_F16;
    case DType::bf16: return DTYPE_BF16;
    case DType::f32:
    case DType::u32: return DTYPE_F32;
    default: throw Error(ErrorKind::invalid_argument, fmt::format("fill dtype: expected f32, f16, bf16 or u32, got {}", to_string(t)));
  }
}

// Workgroups of a grid-stride loop over `items`: enough to fill the device, within its limits.
uint32_t stride_groups(const DeviceCaps& caps, uint64_t items, uint32_t wg) {
  const uint64_t per_unit = 16;  // workgroups per compute unit: keeps every unit busy while loads are in flight
  const uint64_t fill = caps.compute_units ? caps.compute_units * per_unit : 1024;
  const uint64_t needed = (items + wg - 1) / wg;
  return static_cast<uint32_t>(std::clamp<uint64_t>(std::min(fill, needed), 1, caps.max_workgroup_count[0]));
}

// Word i of a u32 tensor that record_fill filled with `seed`: pattern_value's f32 bits.
uint32_t pattern_word(uint32_t seed, uint32_t i) { return std::bit_cast<uint32_t>(pattern_value(seed, i)); }

void apply(ProbeResult& r, const ReplayTiming& t) {
  r.ms = t.median_ms;
  r.min_ms = t.min_ms;
  r.max_ms = t.max_ms;
}

}  // namespace

float pattern_value(uint32_t seed, uint32_t i) {
  uint32_t x = i ^ (seed * BENCH_SEED_MUL);
  x ^= x >> 16;
  x *= BENCH_HASH_MUL1;
  x ^= x >> 15;
  x *= BENCH_HASH_MUL2;
  x ^= x >> 16;
  return static_cast<float>(static_cast<int>(x >> 24) - 128) / static_cast<float>(BENCH_VALUE_DIV);
}

void record_fill(Recorder& recorder, const Tensor& t, uint32_t seed) {
  vk::RecorderImpl& rec = recorder.impl();
  vk::Runtime& rt = recorder.context().runtime();
  if (t.bytes() % 4 != 0 || t.bytes() / 4 > UINT32_MAX)
    throw Error(ErrorKind::invalid_argument,
                fmt::format("fill tensor: expected a whole number of u32 words below 2^32, got {} bytes", t.bytes()));
  const vk::ShaderInterface iface{BENCH_FILL_BINDINGS, sizeof(bench::BenchPush)};
  const vk::Pipeline& pipe = rt.pipelines().get({"bench_fill", {fill_type(t.dtype())}, 0}, iface);
  const bench::BenchPush push{static_cast<uint32_t>(t.bytes() / 4), seed};
  std::array<vk::BufferRef, BENCH_FILL_BINDINGS> buffers{};
  buffers[BENCH_FILL_BIND_DST] = vk::ref(t, vk::Access::write);
  rec.dispatch(pipe, buffers, std::as_bytes(std::span(&push, 1)), stride_groups(rt.caps(), push.count, BENCH_FILL_WG),
               1, 1);
}

ProbeResult read_probe(Context& ctx, uint64_t bytes, int runs) {
  ProbeResult r;
  r.name = "read_bandwidth";
  const DeviceCaps& caps = ctx.caps();
  if (!caps.timestamps) {
    r.reason = "the device has no compute timestamps";
    return r;
  }
  // One buffer within the device's range and allocation limits, and u32 word indices.
  const uint64_t limit = std::min({caps.max_storage_buffer_range, caps.max_allocation_bytes, uint64_t{UINT32_MAX} * 4});
  bytes = std::min(bytes, limit) / 16 * 16;
  if (bytes == 0) throw Error(ErrorKind::invalid_argument, "read probe bytes: expected at least 16, got 0");
  r.supported = true;
  r.bytes = static_cast<double>(bytes);
  const uint32_t seed = 7;
  Tensor src = ctx.tensor(DType::u32, {bytes / 4});
  Tensor sum = ctx.tensor(DType::u32, {1});
  {
    Recorder fill(ctx);
    record_fill(fill, src, seed);
    fill.run();
  }
  vk::Runtime& rt = ctx.runtime();
  const vk::ShaderInterface iface{BENCH_READ_BINDINGS, sizeof(bench::BenchPush)};
  const vk::Pipeline& pipe = rt.pipelines().get({"bench_read", {}, 0}, iface);
  const bench::BenchPush push{static_cast<uint32_t>(bytes / 16), 0};
  std::array<vk::BufferRef, BENCH_READ_BINDINGS> buffers{};
  buffers[BENCH_READ_BIND_SRC] = vk::ref(src, vk::Access::read);
  buffers[BENCH_READ_BIND_RESULT] = vk::ref(sum, vk::Access::read_write);
  Recorder rec(ctx);
  rec.impl().fill(vk::ref(sum, vk::Access::write), 0);
  const uint32_t t0 = rec.timestamp();
  rec.impl().dispatch(pipe, buffers, std::as_bytes(std::span(&push, 1)),
                      stride_groups(caps, push.count, BENCH_READ_WG * BENCH_READ_UNROLL), 1, 1);
  const uint32_t t1 = rec.timestamp();
  rec.run();
  apply(r, time_replays(rec, t0, t1, runs));

  uint32_t want = 0;
  for (uint64_t i = 0; i < bytes / 4; ++i) want += pattern_word(seed, static_cast<uint32_t>(i));
  const uint32_t got = ctx.download_as<uint32_t>(sum)[0];
  r.checked = got == want;
  r.detail = fmt::format("sum of {} words: GPU {:#010x}, host {:#010x}", bytes / 4, got, want);
  return r;
}

ProbeResult coopmat_probe(Context& ctx, uint32_t workgroups, uint32_t iterations, int runs) {
  ProbeResult r;
  r.name = "coopmat_fp16";
  const DeviceCaps& caps = ctx.caps();
  if (!caps.cooperative_matrix_nv ||
      !caps.has_coop_shape(BENCH_COOP_M, BENCH_COOP_N, BENCH_COOP_K, "f16", "f32")) {
    r.reason = fmt::format("the device has no VK_NV_cooperative_matrix {}x{}x{} f16 -> f32", BENCH_COOP_M,
                           BENCH_COOP_N, BENCH_COOP_K);
    return r;
  }
  if (!caps.timestamps) {
    r.reason = "the device has no compute timestamps";
    return r;
  }
  if (workgroups == 0 || iterations == 0)
    throw Error(ErrorKind::invalid_argument,
                fmt::format("coopmat probe: expected workgroups and iterations > 0, got {} and {}", workgroups,
                            iterations));
  workgroups = std::min(workgroups, caps.max_workgroup_count[0]);
  r.supported = true;
  // A = 1 and B = 1/64 everywhere: every step adds K/64 to each element, exactly in f32.
  constexpr float a = 1.0f, b = 1.0f / 64;
  std::vector<uint16_t> ab(BENCH_COOP_M * BENCH_COOP_K + BENCH_COOP_K * BENCH_COOP_N);
  std::fill_n(ab.begin(), BENCH_COOP_M * BENCH_COOP_K, reference::float_to_f16(a));
  std::fill(ab.begin() + BENCH_COOP_M * BENCH_COOP_K, ab.end(), reference::float_to_f16(b));
  Tensor in = ctx.tensor(DType::f16, {ab.size()});
  ctx.upload(in, ab);
  const uint64_t tile = BENCH_COOP_M * BENCH_COOP_N;
  Tensor out = ctx.tensor(DType::f32, {uint64_t(workgroups) * BENCH_COOP_ACCUMULATORS * tile});

  vk::Runtime& rt = ctx.runtime();
  const vk::ShaderInterface iface{BENCH_COOP_BINDINGS, sizeof(bench::BenchPush)};
  // One subgroup per workgroup: pinned to the reported size where the device lets us.
  const uint32_t required = caps.subgroup_size_control ? caps.subgroup_size : 0;
  const vk::Pipeline& pipe = rt.pipelines().get({"bench_coopmat", {caps.subgroup_size}, required}, iface);
  const bench::BenchPush push{iterations, 0};
  std::array<vk::BufferRef, BENCH_COOP_BINDINGS> buffers{};
  buffers[BENCH_COOP_BIND_AB] = vk::ref(in, vk::Access::read);
  buffers[BENCH_COOP_BIND_OUT] = vk::ref(out, vk::Access::write);
  Recorder rec(ctx);
  const uint32_t t0 = rec.timestamp();
  rec.impl().dispatch(pipe, buffers, std::as_bytes(std::span(&push, 1)), workgroups, 1, 1);
  const uint32_t t1 = rec.timestamp();
  rec.run();
  apply(r, time_replays(rec, t0, t1, runs));
  r.flops = 2.0 * BENCH_COOP_M * BENCH_COOP_N * BENCH_COOP_K * BENCH_COOP_ACCUMULATORS * double(iterations) * workgroups;

  const float want = float(iterations) * BENCH_COOP_K * a * b;
  const std::vector<float> got = ctx.download_as<float>(out);
  const auto bad = std::find_if(got.begin(), got.end(), [&](float x) { return x != want; });
  r.checked = bad == got.end();
  r.detail = r.checked ? fmt::format("{} accumulator elements equal {}", got.size(), want)
                       : fmt::format("element {} is {}, expected {}", bad - got.begin(), *bad, want);
  return r;
}

ProbeResult dispatch_floor_probe(Context& ctx, int runs) {
  ProbeResult r;
  r.name = "dispatch_floor";
  if (!ctx.caps().timestamps) {
    r.reason = "the device has no compute timestamps";
    return r;
  }
  r.supported = true;
  constexpr uint32_t kWords = 64, kSeed = 11;  // one workgroup of the fill
  Tensor words = ctx.tensor(DType::u32, {kWords});
  apply(r, time_back_to_back(ctx, [&](Recorder& rec, uint32_t) { record_fill(rec, words, kSeed); }, runs));
  // The same call as the only command of its recording, as a runtime that
  // records each call apart runs it: the recording's first barrier included.
  Recorder alone(ctx);
  const uint32_t t0 = alone.timestamp();
  record_fill(alone, words, kSeed);
  const uint32_t t1 = alone.timestamp();
  const double alone_ms = median_replay_ms(alone, t0, t1, runs);
  const std::vector<uint32_t> got = ctx.download_as<uint32_t>(words);
  for (uint32_t i = 0; i < kWords; ++i) {
    if (got[i] != pattern_word(kSeed, i)) {
      r.detail = fmt::format("word {} is {:#010x}, expected {:#010x}", i, got[i], pattern_word(kSeed, i));
      return r;
    }
  }
  r.checked = true;
  r.detail = fmt::format("{} words filled; alone in its recording {:.4f} ms", kWords, alone_ms);
  return r;
}

}  // namespace vkattn::check

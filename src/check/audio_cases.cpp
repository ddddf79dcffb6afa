#include "check/audio_cases.hpp"

#include <fmt/format.h>

#include <random>

#include "check/vision_cases.hpp"
#include "reference/audio_reference.hpp"
#include "vkattn/plan.hpp"
#include "vkattn/recorder.hpp"

namespace vkattn::check {

std::string describe(const AudioCase& c) {
  const auto& p = c.params;
  return fmt::format("T{} H{} D{} W{} P{} F{} cap{} {}{} {}->{}", p.frames, p.num_heads, p.head_dim, p.chunk,
                     p.max_past, p.max_future, p.logit_cap, p.scale_keys ? "gemma4" : "gemma3n",
                     p.include_past_edge ? " past-edge" : "", to_string(c.dtype), to_string(c.out));
}

CheckResult run_audio_case(Context& ctx, const AudioCase& c, const RunOptions& options) {
  CheckResult r;
  r.name = c.name.empty() ? describe(c) : c.name;
  r.tol = reference::tolerance_for(c.dtype, c.dtype, c.out);
  return host::guarded(r, [&](CheckResult& r) {
    const AudioAttentionParams& p = c.params;
    const uint64_t n = uint64_t(p.frames) * p.num_heads * p.head_dim;
    const uint64_t span = uint64_t(p.max_past) + p.max_future + 1;
    std::mt19937 rng(c.seed);
    host::Values q = host::to_storage(c.dtype, host::gaussian(rng, n, c.logit_scale));
    host::Values k = host::to_storage(c.dtype, host::gaussian(rng, n, 1.0f));
    host::Values v = host::to_storage(c.dtype, host::gaussian(rng, n, 1.0f));
    // Unequal per-dimension scales around softplus(0), some strongly negative.
    host::Values pds = host::to_storage(DType::f32, host::gaussian(rng, p.head_dim, 1.5f));
    host::Values rel = host::to_storage(c.dtype, host::gaussian(rng, span * p.num_heads * p.head_dim, 0.5f));

    const Shape shape{p.frames, p.num_heads, p.head_dim};
    AudioAttentionTensors t;
    t.q = host::upload(ctx, c.dtype, shape, q.bytes);
    t.k = host::upload(ctx, c.dtype, shape, k.bytes);
    t.v = host::upload(ctx, c.dtype, shape, v.bytes);
    t.per_dim_scale = host::upload(ctx, DType::f32, {p.head_dim}, pds.bytes);
    t.rel_pos = host::upload(ctx, c.dtype, {span, p.num_heads, p.head_dim}, rel.bytes);
    t.out = ctx.tensor(c.out, shape);
    host::run_recorded(ctx, options, r, [&](Recorder& rec) {
      AudioCallInfo info = audio_attention(rec, p, t);
      r.variant = info.variant;
      r.reason = info.reason;
    });

    std::vector<float> got = host::download(ctx, t.out, n);
    // Each query reads at most max_past + max_future + 1 keys, values and R rows.
    const double keys = double(std::min<uint64_t>(span, p.frames));
    r.bytes_moved = double(n) * (3.0 * dtype_bits(c.dtype) + dtype_bits(c.out)) / 8 +
                    double(span) * p.num_heads * p.head_dim * dtype_bits(c.dtype) / 8;
    r.flops = 6.0 * double(n) * keys;
    host::judge(r, got, options, [&] {
      return reference::audio_attention(p, q.values, k.values, v.values, pds.values, rel.values);
    });
  });
}

namespace {

AudioCase make_audio_case(uint32_t frames, uint32_t heads, uint32_t dim) {
  AudioCase c;
  c.params.frames = frames;
  c.params.num_heads = heads;
  c.params.head_dim = dim;
  return c;
}

}  // namespace

std::vector<AudioCase> audio_check_grid(GridSize size) {
  std::vector<AudioCase> grid;
  auto add = [&](AudioCase c) {
    c.seed = static_cast<uint32_t>(grid.size() + 300);
    grid.push_back(std::move(c));
  };
  // Gemma 4 (scale_keys, past edge excluded) and Gemma 3n (no key scale, past
  // edge included), T not a multiple of W, head dims 128 and 192.
  for (bool gemma4 : {true, false}) {
    for (uint32_t d : {128u, 192u}) {
      AudioCase c = make_audio_case(30, 2, d);
      c.params.scale_keys = gemma4;
      c.params.include_past_edge = !gemma4;
      add(c);
    }
  }
  {
    AudioCase c = make_audio_case(5, 2, 128);  // T < W: one partial block
    add(c);
    c.params.include_past_edge = true;
    c.dtype = c.out = DType::f16;
    add(c);
  }
  {
    AudioCase c = make_audio_case(29, 3, 64);  // future context, a small cap the logits hit
    c.params.chunk = 5;
    c.params.max_past = 7;
    c.params.max_future = 3;
    c.params.logit_cap = 5.0f;
    c.logit_scale = 8.0f;
    add(c);
    c.params.logit_cap = 0.0f;  // cap off
    c.params.include_past_edge = true;
    c.dtype = DType::f16;
    add(c);
  }
  {
    // Past reach larger than a tile of keys (more than one tile per query), W = 1.
    AudioCase c = make_audio_case(80, 1, 128);
    c.params.chunk = 1;
    c.params.max_past = 40;
    c.params.max_future = 4;
    c.params.include_past_edge = true;
    add(c);
  }
  {
    // P = 0 without the past edge and F = 0: no visible key, every row is zeros.
    AudioCase c = make_audio_case(7, 2, 64);
    c.params.max_past = 0;
    c.params.chunk = 3;
    add(c);
  }
  {
    AudioCase c = make_audio_case(50, 4, 128);  // f16 in, f32 out
    c.dtype = DType::f16;
    add(c);
  }
  if (size == GridSize::full) {
    AudioCase c = make_audio_case(750, 8, 128);
    add(c);
    c = make_audio_case(1500, 8, 192);
    c.params.include_past_edge = true;
    c.params.scale_keys = false;
    c.dtype = c.out = DType::f16;
    add(c);
  }
  return grid;
}

std::vector<CheckCase> audio_check_cases(const DeviceCaps&, GridSize size) {
  std::vector<CheckCase> out;
  for (auto& c : audio_check_grid(size)) {
    std::string name = c.name.empty() ? describe(c) : c.name;
    out.push_back({name, [c](Context& ctx, const RunOptions& o) { return run_audio_case(ctx, c, o); }});
  }
  return out;
}

std::vector<CheckCase> audio_demo_cases(DemoSize size) {
  const uint32_t frames = size == DemoSize::cpu ? 150 : 750;
  AudioCase c = make_audio_case(frames, 8, 128);
  c.name = fmt::format("gemma4 audio (T{} H8 D128 W12 P12)", frames);
  return {{c.name, [c](Context& ctx, const RunOptions& o) { return run_audio_case(ctx, c, o); }}};
}

}  // namespace vkattn::check

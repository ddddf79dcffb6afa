#include "check/vision_cases.hpp"
#include "check/timing.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "planner/vision_planner.hpp"
#include "reference/rounding.hpp"
#include "reference/vision_reference.hpp"
#include "vkattn/error.hpp"
#include "vkattn/plan.hpp"

namespace vkattn::check {

namespace host {

void run_recorded(Context& ctx, const RunOptions& options, CheckResult& r, const std::function<void(Recorder&)>& call) {
  Recorder rec(ctx);
  const bool timed = options.timed_runs > 0 && ctx.caps().timestamps;
  const uint32_t t0 = timed ? rec.timestamp() : 0;
  call(rec);
  r.pipelines = bound_pipelines(rec);
  const uint32_t t1 = timed ? rec.timestamp() : 0;
  rec.run();
  if (!timed) return;
  const ReplayTiming t = time_replays(rec, t0, t1, options.timed_runs);
  r.gpu_ms = t.median_ms;
  r.gpu_min_ms = t.min_ms;
  r.gpu_max_ms = t.max_ms;
}

void judge(CheckResult& r, std::span<const float> got, const RunOptions& options,
           const std::function<std::vector<double>()>& oracle) {
  if (options.skip_oracle) {
    r.passed = true;
    return;
  }
  r.cmp = reference::compare(got, oracle(), r.tol);
  r.passed = r.cmp.passed;
}

CheckResult guarded(CheckResult r, const std::function<void(CheckResult&)>& body) {
  try {
    body(r);
  } catch (const std::exception& e) {
    r.error = e.what();
    r.passed = false;
  }
  return r;
}

}  // namespace host

std::string describe(const VisionCase& c) {
  const auto& p = c.params;
  std::string s = fmt::format("P{} H{} D{} {} {}->{}", p.patches, p.num_heads, p.head_dim, to_string(p.layout),
                              to_string(c.dtype), to_string(c.out));
  if (p.scale) s += fmt::format(" scale={}", *p.scale);
  return s;
}

CheckResult run_vision_case(Context& ctx, const VisionCase& c, const RunOptions& options) {
  CheckResult r;
  r.name = c.name.empty() ? describe(c) : c.name;
  r.tol = reference::tolerance_for(c.dtype, c.dtype, c.out);
  return host::guarded(r, [&](CheckResult& r) {
    const VisionAttentionParams& p = c.params;
    const bool hpd = p.layout == VisionLayout::hpd;
    const uint64_t n = uint64_t(p.patches) * p.num_heads * p.head_dim;
    std::mt19937 rng(c.seed);
    // Host values in PHD order (the oracle's); uploaded in the call's layout.
    host::Values q = host::to_storage(c.dtype, host::gaussian(rng, n, c.logit_scale));
    host::Values k = host::to_storage(c.dtype, host::gaussian(rng, n, 1.0f));
    host::Values v = host::to_storage(c.dtype, host::gaussian(rng, n, 1.0f));
    const Shape shape = hpd ? Shape{p.num_heads, p.patches, p.head_dim} : Shape{p.patches, p.num_heads, p.head_dim};
    auto in_layout = [&](const host::Values& x) {
      return hpd ? host::to_storage(c.dtype, host::swap_rows(x.values, p.patches, p.num_heads, p.head_dim)).bytes
                 : x.bytes;
    };
    VisionAttentionTensors t;
    t.q = host::upload(ctx, c.dtype, shape, in_layout(q));
    t.k = host::upload(ctx, c.dtype, shape, in_layout(k));
    t.v = host::upload(ctx, c.dtype, shape, in_layout(v));
    t.out = ctx.tensor(c.out, shape);

    PlanOptions plan;
    plan.variant = c.variant;
    plan.strict = !c.variant.empty();
    plan.allow_reduced_precision = !c.variant.empty();  // a forced variant is judged at its own precision (below)
    host::run_recorded(ctx, options, r, [&](Recorder& rec) {
      VisionCallInfo info = vision_attention(rec, p, t, plan);
      r.variant = info.variant;
      r.reason = info.reason;
    });
    // A variant that stages K/V as f16 is held to f16 accuracy whatever the input dtype.
    const planner::VisionVariant* chosen = planner::find_vision_variant(r.variant);
    if (chosen && chosen->f16_shared)
      r.tol.abs_rel = std::max(r.tol.abs_rel, reference::tolerance_for(DType::f16, DType::f16, DType::f16).abs_rel);

    std::vector<float> got = host::download(ctx, t.out, n);
    if (hpd) got = host::swap_rows(got, p.num_heads, p.patches, p.head_dim);
    r.bytes_moved = double(n) * (3.0 * dtype_bits(c.dtype) + dtype_bits(c.out)) / 8;
    r.flops = 4.0 * p.patches * double(p.patches) * p.num_heads * p.head_dim;
    host::judge(r, got, options, [&] {
      return reference::vision_attention(q.values, k.values, v.values, p.patches, p.num_heads, p.head_dim,
                                         p.effective_scale());
    });
  });
}

CheckResult run_posembed_case(Context& ctx, const PosEmbedCase& c, const RunOptions& options) {
  CheckResult r;
  const PosEmbedParams& p = c.params;
  r.name = c.name.empty() ? fmt::format("posembed P{} grid x{} hidden{} pos{} {}", p.patches, p.patches_x,
                                        p.hidden_size, p.pos_size, to_string(c.dtype))
                          : c.name;
  r.variant = fmt::format("posembed_{}", to_string(c.dtype));
  r.reason = "the only position-embedding kernel";
  r.tol = reference::tolerance_for(c.dtype, c.dtype, c.dtype);
  return host::guarded(r, [&](CheckResult& r) {
    std::mt19937 rng(c.seed);
    const uint64_t n = uint64_t(p.patches) * p.hidden_size;
    host::Values hidden = host::to_storage(c.dtype, host::gaussian(rng, n, 1.0f));
    host::Values table = host::to_storage(c.dtype, host::gaussian(rng, 2ull * p.pos_size * p.hidden_size, 0.5f));
    PosEmbedTensors t;
    t.hidden = host::upload(ctx, c.dtype, {p.patches, p.hidden_size}, hidden.bytes);
    t.table = host::upload(ctx, c.dtype, {2, p.pos_size, p.hidden_size}, table.bytes);
    // In place: the first run is compared; timing replays then add again.
    RunOptions once = options;
    once.timed_runs = 0;
    host::run_recorded(ctx, once, r, [&](Recorder& rec) { pos_embed_add(rec, p, t); });
    std::vector<float> got = host::download(ctx, t.hidden, n);
    if (options.timed_runs > 0) host::run_recorded(ctx, options, r, [&](Recorder& rec) { pos_embed_add(rec, p, t); });
    r.bytes_moved = double(n) * 4 * dtype_bits(c.dtype) / 8;
    r.flops = 2.0 * double(n);
    host::judge(r, got, options, [&] {
      return reference::pos_embed_add(hidden.values, table.values, p.patches, p.hidden_size, p.pos_size, p.patches_x);
    });
  });
}

namespace {

VisionCase make_vision_case(uint32_t patches, uint32_t heads, uint32_t dim, DType dtype) {
  VisionCase c;
  c.params.patches = patches;
  c.params.num_heads = heads;
  c.params.head_dim = dim;
  c.dtype = c.out = dtype;
  c.logit_scale = 2.0f;
  return c;
}

bool runnable(const planner::VisionVariant& v, const DeviceCaps& caps, const VisionCase& c) {
  planner::VisionShape s{c.params.patches, c.params.num_heads, c.params.head_dim, c.dtype, c.params.layout};
  return vision_geometry(v, caps, s).geometry.has_value();
}

}  // namespace

std::vector<VisionCase> vision_check_grid(const DeviceCaps& caps, GridSize size) {
  std::vector<VisionCase> grid;
  const bool full = size == GridSize::full;
  uint32_t seed = 100;
  auto add = [&](VisionCase c) {
    c.seed = seed++;
    grid.push_back(std::move(c));
  };

  // 1. Every variant x dtype, forced: 45 patches is a partial last tile for
  //    every tile width and query group. Head dim 64, or the largest of
  //    32/16 this device's shared memory takes (64-key f32 tiles on 32 KiB).
  //    Then again at the largest head dim of 256/192/128 the variant can run.
  const uint32_t patches = full ? 2304 : 45;
  for (const auto& v : planner::vision_variants()) {
    for (uint32_t d : {64u, 32u, 16u}) {
      VisionCase c = make_vision_case(patches, 2, d, v.dtype);
      c.variant = v.name;
      if (!runnable(v, caps, c)) continue;
      c.name = fmt::format("{} P{} D{}", v.name, patches, d);
      add(c);
      break;
    }
    if (v.dtype != DType::f32 && !full) continue;
    for (uint32_t d : {256u, 192u, 128u}) {
      VisionCase c = make_vision_case(full ? 1000 : 37, 2, d, v.dtype);
      c.variant = v.name;
      if (!runnable(v, caps, c)) continue;
      c.name = fmt::format("{} P{} D{}", v.name, c.params.patches, d);
      add(c);
      break;
    }
  }

  // 2. The planner's choice across head dims, patch counts, layouts and dtypes.
  struct Shape {
    uint32_t patches, heads, dim;
    DType dtype, out;
    VisionLayout layout;
  };
  const Shape shapes[] = {
      {1, 3, 64, DType::f32, DType::f32, VisionLayout::phd},    {3, 2, 128, DType::f16, DType::f16, VisionLayout::phd},
      {70, 2, 128, DType::f32, DType::f16, VisionLayout::phd},  {70, 2, 192, DType::f16, DType::f32, VisionLayout::hpd},
      {130, 1, 256, DType::f32, DType::f32, VisionLayout::phd}, {130, 1, 256, DType::f16, DType::f16, VisionLayout::hpd},
      {100, 3, 72, DType::f32, DType::f32, VisionLayout::hpd},
  };
  for (const auto& s : shapes) {
    VisionCase c = make_vision_case(s.patches, s.heads, s.dim, s.dtype);
    c.out = s.out;
    c.params.layout = s.layout;
    add(c);
  }
  {
    // Gemma 4 vision scores: scale 1.0 with small projected Q.
    VisionCase c = make_vision_case(64, 2, 64, DType::f32);
    c.params.scale = 1.0f;
    c.logit_scale = 0.125f;
    add(c);
    // Large logits: a near one-hot softmax.
    c = make_vision_case(50, 2, 64, DType::f16);
    c.logit_scale = 6.0f;
    add(c);
  }
  // 3. The tensor-core engine and its plain-GLSL build, forced: head dims that
  //    are not a multiple of 16 (zero-padded fragments), f32 rounded to f16
  //    when staged, both layouts, several workgroups of rows with a partial
  //    last one and a partial last key tile, fewer patches than one fragment.
  const Shape fragment_shapes[] = {
      {200, 2, 72, DType::f16, DType::f32, VisionLayout::hpd}, {150, 2, 64, DType::f32, DType::f32, VisionLayout::phd},
      {9, 3, 40, DType::f32, DType::f16, VisionLayout::hpd},   {70, 1, 256, DType::f16, DType::f16, VisionLayout::phd},
  };
  for (const char* family : {"vision_flash_coopmat", "vision_flash_emulated"}) {
    for (const auto& s : fragment_shapes) {
      VisionCase c = make_vision_case(full ? s.patches * 12 : s.patches, s.heads, s.dim, s.dtype);
      c.out = s.out;
      c.params.layout = s.layout;
      c.variant = fmt::format("{}_{}", family, to_string(s.dtype));
      if (!runnable(*planner::find_vision_variant(c.variant), caps, c)) continue;
      c.name = fmt::format("{} {}", c.variant, describe(c));
      add(c);
    }
  }

  // 4. The workgroup-matrix engine (f16 inputs) and its plain-GLSL build,
  //    forced: the same shapes with f16 inputs.
  for (const char* family : {"vision_flash_coopmat2", "vision_flash_wg_emulated"}) {
    for (const auto& s : fragment_shapes) {
      VisionCase c = make_vision_case(full ? s.patches * 12 : s.patches, s.heads, s.dim, DType::f16);
      c.out = s.out;
      c.params.layout = s.layout;
      c.variant = fmt::format("{}_f16", family);
      if (!runnable(*planner::find_vision_variant(c.variant), caps, c)) continue;
      c.name = fmt::format("{} {}", c.variant, describe(c));
      add(c);
    }
  }

  if (full) {
    VisionCase gemma = make_vision_case(2304, 12, 64, DType::f32);
    gemma.params.scale = 1.0f;
    gemma.logit_scale = 0.125f;
    add(gemma);
    add(make_vision_case(4096, 8, 128, DType::f16));  // heads kept low: the float64 oracle runs on one CPU core
    add(make_vision_case(9216, 2, 72, DType::f32));
    VisionCase hd = make_vision_case(4096, 4, 256, DType::f16);
    hd.params.layout = VisionLayout::hpd;
    add(hd);
  }
  return grid;
}

std::vector<PosEmbedCase> posembed_check_grid(GridSize size) {
  std::vector<PosEmbedCase> grid;
  auto add = [&](uint32_t patches, uint32_t px, uint32_t hidden, uint32_t pos, DType t) {
    PosEmbedCase c;
    c.params = {patches, hidden, pos, px};
    c.dtype = t;
    c.seed = static_cast<uint32_t>(grid.size() + 7);
    grid.push_back(c);
  };
  add(30, 6, 24, 8, DType::f32);   // a 6x5 grid, table rows to spare
  add(31, 6, 40, 6, DType::f16);   // a partial last image row; pos_size exactly enough
  add(16, 16, 10, 16, DType::f16);  // one image row
  if (size == GridSize::full) {
    add(2304, 48, 1152, 64, DType::f32);  // Gemma 3 / 4 vision: 48x48 patches
    add(9216, 96, 768, 96, DType::f16);
  }
  return grid;
}

std::vector<CheckCase> vision_check_cases(const DeviceCaps& caps, GridSize size) {
  std::vector<CheckCase> out;
  for (auto& c : vision_check_grid(caps, size)) {
    std::string name = c.name.empty() ? describe(c) : c.name;
    out.push_back({name, [c](Context& ctx, const RunOptions& o) { return run_vision_case(ctx, c, o); }});
  }
  for (auto& c : posembed_check_grid(size)) {
    std::string name = fmt::format("posembed P{} x{} hidden{} pos{} {}", c.params.patches, c.params.patches_x,
                                   c.params.hidden_size, c.params.pos_size, to_string(c.dtype));
    c.name = name;
    out.push_back({name, [c](Context& ctx, const RunOptions& o) { return run_posembed_case(ctx, c, o); }});
  }
  return out;
}

std::vector<CheckCase> vision_demo_cases(DemoSize size) {
  const uint32_t side = size == DemoSize::cpu ? 16 : 48;  // patches per image row and column
  VisionCase c = make_vision_case(side * side, 12, 64, DType::f32);
  c.name = fmt::format("gemma4 vision (P{} H12 D64 scale 1.0)", side * side);
  c.params.scale = 1.0f;
  c.logit_scale = 0.125f;
  PosEmbedCase pe;
  pe.name = fmt::format("gemma4 vision posembed ({}x{}, hidden 1152)", side, side);
  pe.params = {side * side, 1152, 64, side};
  return {{c.name, [c](Context& ctx, const RunOptions& o) { return run_vision_case(ctx, c, o); }},
          {pe.name, [pe](Context& ctx, const RunOptions& o) { return run_posembed_case(ctx, pe, o); }}};
}

}  // namespace vkattn::check

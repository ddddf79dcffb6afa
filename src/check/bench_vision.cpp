#include <algorithm>
#include <vector>

#include "check/bench_run.hpp"
#include "check/text_work.hpp"
#include "planner/vision_variants.hpp"
#include "vkattn/plan.hpp"
#include "vkattn/recorder.hpp"
#include "vkattn/vision.hpp"

namespace vkattn::check {

namespace {

// PHD vision attention [P, H, D] is text attention of one sequence of P
// queries over P keys with H query and KV heads, no mask, the same scale:
// the same memory layout, so the text oracle and its sampling judge it.
TextCase as_text(const VisionCase& c) {
  const auto& p = c.params;
  TextCase t = make_text_bench_case(1, p.patches, p.num_heads, p.num_heads, p.head_dim, p.patches,
                                    KvLayout::contiguous, 0);
  t.params.causal = false;
  t.params.scale = p.effective_scale();
  t.q = t.kv = c.dtype;
  t.out = c.out;
  return t;
}

}  // namespace

BenchRecord run_vision_bench(Context& ctx, const VisionCase& c, const BenchRunOptions& options) {
  const auto& p = c.params;
  const TextCase text = as_text(c);
  BenchRecord r;
  const TextWork work = text_work(text.params, text.q, text.kv, text.out);
  r.bytes = work.bytes;
  r.flops = work.flops;
  const Shape shape{p.patches, p.num_heads, p.head_dim};
  VisionAttentionTensors t;
  t.q = ctx.tensor(c.dtype, shape);
  t.k = ctx.tensor(c.dtype, shape);
  t.v = ctx.tensor(c.dtype, shape);
  t.out = ctx.tensor(c.out, shape);
  // Input sets to rotate among while timing, all filled alike; set 0 is checked.
  std::vector<VisionAttentionTensors> sets{t};
  for (uint32_t i = 1; i < rotation_sets(t.k.bytes() + t.v.bytes()); ++i)
    sets.push_back({ctx.tensor(c.dtype, shape), ctx.tensor(c.dtype, shape), ctx.tensor(c.dtype, shape),
                    ctx.tensor(c.out, shape)});
  r.input_sets = uint32_t(sets.size());
  {
    Recorder fill(ctx);
    for (const auto& set : sets) record_fill_inputs(fill, set.q, set.k, set.v);
    fill.run();
  }
  // A suite-wide --variant names text variants: for vision the planner chooses,
  // unless it names a vision variant (as `vkattn tune` does), forced strictly.
  PlanOptions plan;
  if (planner::find_vision_variant(options.variant)) {
    plan.variant = options.variant;
    plan.strict = true;
  }
  time_bench_call(ctx, [&](Recorder& rec, uint32_t i) {
    r.variant = vision_attention(rec, p, sets[i % sets.size()], plan).variant;
  }, options, r);
  // A variant that stages K/V as f16 is held to f16 accuracy whatever the input dtype.
  reference::Tolerance tol = reference::tolerance_for(c.dtype, c.dtype, c.out);
  const planner::VisionVariant* chosen = planner::find_vision_variant(r.variant);
  if (chosen && chosen->f16_shared)
    tol.abs_rel = std::max(tol.abs_rel, reference::tolerance_for(DType::f16, DType::f16, DType::f16).abs_rel);
  std::vector<std::byte> out_bytes(t.out.bytes());
  ctx.download(t.out, out_bytes);
  check_text_parity(text, {}, host::from_storage(c.out, out_bytes, t.out.elements()), tol, r);
  return r;
}

}  // namespace vkattn::check

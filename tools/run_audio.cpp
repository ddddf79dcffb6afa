// `vkattn run audio`: Conformer block-local attention (Gemma 3n / Gemma 4
// audio) on .npy inputs, writing an .npy output; --check compares it with the
// float64 oracle.
//
//   q, k, v [T, H, D] unpadded, f32 or f16; --rel-pos R [P + F + 1, H, D]
//   (q's dtype); --per-dim-scale [D] raw (f32 or f16 file, used as f32);
//   the output is [T, H, D] in q's dtype.
#include <fmt/format.h>

#include "commands.hpp"
#include "io/npy.hpp"
#include "reference/audio_reference.hpp"
#include "reference/tolerance.hpp"
#include "vkattn/audio.hpp"
#include "vkattn/context.hpp"
#include "vkattn/plan.hpp"
#include "vkattn/recorder.hpp"

namespace vkattn::cli {

void add_run_audio(CLI::App& run, GlobalOptions& g, int& status) {
  struct Opts {
    std::string q, k, v, per_dim_scale, rel_pos, out;
    OverrideFlags overrides;
    AudioAttentionParams p;
    bool gemma3n = false, check = false;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = run.add_subcommand("audio", "Conformer block-local attention (Gemma 3n / Gemma 4 audio)");
  cmd->add_option("--q", o->q, "Queries [T, H, D] (.npy f32 or f16)")->required();
  cmd->add_option("--k", o->k, "Keys [T, H, D], q's dtype")->required();
  cmd->add_option("--v", o->v, "Values [T, H, D], q's dtype")->required();
  cmd->add_option("--per-dim-scale", o->per_dim_scale, "Raw per-dimension query scale [D] (softplus applied)")
      ->required();
  cmd->add_option("--rel-pos", o->rel_pos, "Projected relative positions R [P + F + 1, H, D], q's dtype")->required();
  cmd->add_option("--out", o->out, "Output .npy [T, H, D]")->required();
  cmd->add_option("--chunk", o->p.chunk, "W: queries per block")->capture_default_str();
  cmd->add_option("--max-past", o->p.max_past, "P: past frames a block's context reaches")->capture_default_str();
  cmd->add_option("--max-future", o->p.max_future, "F: future frames a query sees")->capture_default_str();
  cmd->add_option("--logit-cap", o->p.logit_cap, "z = cap * tanh(z / cap); 0 = off")->capture_default_str();
  cmd->add_flag("--include-past-edge", o->p.include_past_edge,
                "A query sees t_q - t_k = P too (Gemma 3n, Ollama); default [0, P - 1] (Gemma 4)");
  cmd->add_flag("--gemma3n", o->gemma3n, "Keys unscaled (default Gemma 4: k * ln(1 + e) / ln 2)");
  add_override_flags(cmd, o->overrides, "Force a kernel variant (audio_block_local_f32 | _f16)", "A rejected --variant is an error, not a fallback");
  cmd->add_flag("--check", o->check, "Also compute the float64 oracle and print the max relative error");
  cmd->callback([o, &g, &status] {
    const NpyInput q = read_float_npy(o->q, "q", 3, "[T, H, D]"), k = read_float_npy(o->k, "k", 3, "[T, H, D]"),
                   v = read_float_npy(o->v, "v", 3, "[T, H, D]");
    const NpyInput rel = read_float_npy(o->rel_pos, "rel_pos", 3, "[P + F + 1, H, D]");
    const NpyInput pds = read_float_npy(o->per_dim_scale, "per_dim_scale", 1, "[D]");
    AudioAttentionParams p = o->p;
    p.frames = static_cast<uint32_t>(q.shape[0]);
    p.num_heads = static_cast<uint32_t>(q.shape[1]);
    p.head_dim = static_cast<uint32_t>(q.shape[2]);
    p.scale_keys = !o->gemma3n;
    const std::vector<float> scale = io::as_f32(pds.array);

    Context ctx(ContextOptions{g.device});
    AudioAttentionTensors t;
    t.q = upload_npy(ctx, q);
    t.k = upload_npy(ctx, k);
    t.v = upload_npy(ctx, v);
    t.rel_pos = upload_npy(ctx, rel);
    t.per_dim_scale = ctx.tensor(DType::f32, pds.shape);
    ctx.upload(t.per_dim_scale, scale);
    t.out = ctx.tensor(q.dtype, q.shape);
    const PlanOptions opts = o->overrides.plan_options();
    Recorder rec(ctx);
    const AudioCallInfo info = audio_attention(rec, p, t, opts);
    rec.run();
    const io::NpyArray out = download_npy(ctx, t.out);
    io::write_npy(o->out, out);
    fmt::print("device: {}\nvariant: {} ({})\n", ctx.caps().name, info.variant, info.reason);
    for (const auto& w : info.warnings) fmt::print("warning: {}\n", w);
    fmt::print("wrote {} {} to {}\n", to_string(q.dtype), shape_to_string(q.shape), o->out);
    status = 0;
    if (o->check)
      status = report_check(out,
                            reference::audio_attention(p, io::as_f32(q.array), io::as_f32(k.array),
                                                       io::as_f32(v.array), scale, io::as_f32(rel.array)),
                            reference::tolerance_for(q.dtype, q.dtype, q.dtype));
  });
}

}  // namespace vkattn::cli

// `vkattn run vision` and `vkattn run posembed`: one vision op on .npy inputs,
// writing an .npy output; --check compares it with the float64 oracle.
//
//   vision:   q, k, v [P, H, D] (--layout phd, default) or [H, P, D] (hpd),
//             f32 or f16 (kept as stored); output dtype --out-dtype (default q's).
//   posembed: hidden [P, hidden], table [2, pos_size, hidden] (x rows, then y
//             rows), same dtype; --patches-x patches per image row; the output
//             is hidden + the embeddings, hidden's dtype and shape.
#include <fmt/format.h>

#include "check/vision_cases.hpp"
#include "commands.hpp"
#include "io/npy.hpp"
#include "reference/tolerance.hpp"
#include "reference/vision_reference.hpp"
#include "vkattn/context.hpp"
#include "vkattn/error.hpp"
#include "vkattn/plan.hpp"
#include "vkattn/recorder.hpp"
#include "vkattn/vision.hpp"

namespace vkattn::cli {

NpyInput read_float_npy(const std::string& path, const char* name, size_t rank, const char* layout) {
  NpyInput in{io::read_npy(path), DType::f32, {}};
  if (in.array.descr == "<f2") in.dtype = DType::f16;
  else if (in.array.descr != "<f4")
    throw Error(ErrorKind::invalid_argument, fmt::format("{}: expected float32 ('<f4') or float16 ('<f2') in '{}', got '{}'",
                                                         name, path, in.array.descr));
  in.shape.assign(in.array.shape.begin(), in.array.shape.end());
  if (in.shape.size() != rank)
    throw Error(ErrorKind::invalid_argument, fmt::format("{}: expected a {}-d array {} in '{}', got shape {}", name,
                                                         rank, layout, path, shape_to_string(in.shape)));
  for (auto d : in.shape)
    if (d == 0 || d > UINT32_MAX)
      throw Error(ErrorKind::invalid_argument, fmt::format("{}: expected dimensions in [1, 2^32), got shape {}", name,
                                                           shape_to_string(in.shape)));
  return in;
}

Tensor upload_npy(Context& ctx, const NpyInput& in) {
  Tensor t = ctx.tensor(in.dtype, in.shape);
  ctx.upload(t, in.array.data);
  return t;
}

io::NpyArray download_npy(Context& ctx, const Tensor& t) {
  io::NpyArray a;
  a.descr = t.dtype() == DType::f16 ? "<f2" : "<f4";
  a.shape.assign(t.shape().begin(), t.shape().end());
  a.data.resize(dtype_storage_bytes(t.dtype(), t.elements()));
  ctx.download(t, a.data);
  return a;
}

int report_check(const io::NpyArray& got, const std::vector<double>& want, reference::Tolerance tol) {
  const auto r = reference::compare(io::as_f32(got), want, tol);
  fmt::print("max relative error vs float64 oracle: {:.3e} (tolerance {:.1e}) {}\n", r.rel_err, tol.abs_rel,
             r.passed ? "PASS" : "FAIL");
  return r.passed ? 0 : 1;
}

void add_run_vision(CLI::App& run, GlobalOptions& g, int& status) {
  struct Opts {
    std::string q, k, v, out, layout = "phd", out_dtype;
    OverrideFlags overrides;
    float scale = 0.0f;
    bool check = false;
    CLI::Option* scale_opt = nullptr;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = run.add_subcommand("vision", "Bidirectional vision-tower attention over patches");
  cmd->add_option("--q", o->q, "Queries [P, H, D] (phd) or [H, P, D] (hpd); .npy f32 or f16")->required();
  cmd->add_option("--k", o->k, "Keys, shaped and typed like --q")->required();
  cmd->add_option("--v", o->v, "Values, shaped and typed like --q")->required();
  cmd->add_option("--out", o->out, "Output .npy, shaped like --q")->required();
  cmd->add_option("--layout", o->layout, "Row order of every tensor")->check(CLI::IsMember({"phd", "hpd"}));
  cmd->add_option("--out-dtype", o->out_dtype, "f32 | f16 (default: q's)")->check(CLI::IsMember({"f32", "f16"}));
  o->scale_opt = cmd->add_option("--scale", o->scale, "Score scale (default 1/sqrt(D); Gemma 4 vision: 1.0)");
  add_override_flags(cmd, o->overrides, "Force a kernel variant (see `vkattn plan vision`)", "A rejected --variant is an error, not a fallback");
  cmd->add_flag("--check", o->check, "Also compute the float64 oracle and print the max relative error");
  cmd->callback([o, &g, &status] {
    const bool hpd = o->layout == "hpd";
    const char* layout = hpd ? "[H, P, D]" : "[P, H, D]";
    const NpyInput q = read_float_npy(o->q, "q", 3, layout), k = read_float_npy(o->k, "k", 3, layout),
                   v = read_float_npy(o->v, "v", 3, layout);
    VisionAttentionParams p;
    p.layout = vision_layout_from_string(o->layout);
    p.patches = static_cast<uint32_t>(q.shape[hpd ? 1 : 0]);
    p.num_heads = static_cast<uint32_t>(q.shape[hpd ? 0 : 1]);
    p.head_dim = static_cast<uint32_t>(q.shape[2]);
    if (*o->scale_opt) p.scale = o->scale;

    Context ctx(ContextOptions{g.device});
    VisionAttentionTensors t{upload_npy(ctx, q), upload_npy(ctx, k), upload_npy(ctx, v), {}};
    t.out = ctx.tensor(o->out_dtype.empty() ? q.dtype : dtype_from_string(o->out_dtype), q.shape);
    const PlanOptions opts = o->overrides.plan_options();
    Recorder rec(ctx);
    const VisionCallInfo info = vision_attention(rec, p, t, opts);
    rec.run();
    const io::NpyArray out = download_npy(ctx, t.out);
    io::write_npy(o->out, out);

    fmt::print("device: {}\n", ctx.caps().name);
    fmt::print("variant: {} ({})\n", info.variant, info.reason);
    for (const auto& w : info.warnings) fmt::print("warning: {}\n", w);
    fmt::print("wrote {} {} to {}\n", to_string(t.out.dtype()), shape_to_string(t.out.shape()), o->out);
    status = 0;
    if (o->check) {
      auto phd = [&](const io::NpyArray& a) {
        auto x = io::as_f32(a);
        return hpd ? check::host::swap_rows(x, p.num_heads, p.patches, p.head_dim) : x;
      };
      auto want = reference::vision_attention(phd(q.array), phd(k.array), phd(v.array), p.patches, p.num_heads,
                                              p.head_dim, p.effective_scale());
      if (hpd) want = check::host::swap_rows(want, p.patches, p.num_heads, p.head_dim);  // to the output's order
      auto tol = reference::tolerance_for(q.dtype, q.dtype, t.out.dtype());
      if (info.variant.find("_f16s_") != std::string::npos) tol = reference::tolerance_for(DType::f16, DType::f16, DType::f16);
      status = report_check(out, want, tol);
    }
  });
}

void add_run_posembed(CLI::App& run, GlobalOptions& g, int& status) {
  struct Opts {
    std::string hidden, table, out;
    uint32_t patches_x = 0;
    bool check = false;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = run.add_subcommand("posembed", "Vision 2D position-embedding add");
  cmd->add_option("--hidden", o->hidden, "Hidden states [P, hidden] (.npy f32 or f16)")->required();
  cmd->add_option("--table", o->table, "Embeddings [2, pos_size, hidden]: x rows, then y rows; hidden's dtype")
      ->required();
  cmd->add_option("--patches-x", o->patches_x, "Patches per image row (patch p is at x = p % N, y = p / N)")
      ->required();
  cmd->add_option("--out", o->out, "Output .npy [P, hidden]")->required();
  cmd->add_flag("--check", o->check, "Also compute the float64 oracle and print the max relative error");
  cmd->callback([o, &g, &status] {
    const NpyInput hidden = read_float_npy(o->hidden, "hidden", 2, "[P, hidden]");
    const NpyInput table = read_float_npy(o->table, "table", 3, "[2, pos_size, hidden]");
    PosEmbedParams p{static_cast<uint32_t>(hidden.shape[0]), static_cast<uint32_t>(hidden.shape[1]),
                     static_cast<uint32_t>(table.shape[1]), o->patches_x};
    Context ctx(ContextOptions{g.device});
    PosEmbedTensors t{upload_npy(ctx, hidden), upload_npy(ctx, table)};
    Recorder rec(ctx);
    pos_embed_add(rec, p, t);
    rec.run();
    const io::NpyArray out = download_npy(ctx, t.hidden);
    io::write_npy(o->out, out);
    fmt::print("device: {}\nwrote {} {} to {}\n", ctx.caps().name, to_string(hidden.dtype),
               shape_to_string(hidden.shape), o->out);
    status = 0;
    if (o->check)
      status = report_check(out,
                            reference::pos_embed_add(io::as_f32(hidden.array), io::as_f32(table.array), p.patches,
                                                     p.hidden_size, p.pos_size, p.patches_x),
                            reference::tolerance_for(hidden.dtype, hidden.dtype, hidden.dtype));
  });
}

}  // namespace vkattn::cli

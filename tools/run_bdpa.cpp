// `vkattn run bdpa`: builds a BDPA cache on the GPU from a contiguous pre-RoPE
// cache and its token ids (.npy), attends over it, writes the output (.npy);
// --check judges it twice with the float64 oracle (over the cache the kernel
// read, and end to end against the unquantized cache rotated once).
//
//   q [B, S, H, D] (f32 or f16); k, v [B, C, Hkv, D] before RoPE (f32 or f16,
//   the basis keeps their dtype); tokens [B, C] (u32 or non-negative ints).
#include <fmt/format.h>

#include <algorithm>

#include "check/bdpa_cases.hpp"
#include "commands.hpp"
#include "io/npy.hpp"
#include "reference/bdpa_reference.hpp"
#include "vkattn/bdpa.hpp"
#include "vkattn/error.hpp"
#include "vkattn/recorder.hpp"

namespace vkattn::cli {

namespace {

int report(const char* what, const std::vector<float>& got, const std::vector<double>& want,
           reference::Tolerance tol) {
  const auto r = reference::compare(got, want, tol);
  fmt::print("{}: max relative error {:.3e} (tolerance {:.1e}) {}\n", what, r.rel_err, tol.abs_rel,
             r.passed ? "PASS" : "FAIL");
  return r.passed ? 0 : 1;
}

}  // namespace

void add_run_bdpa(CLI::App& run, GlobalOptions& g, int& status) {
  struct Opts {
    std::string q, k, v, tokens, out, kv_len, start_pos, rope = "rotate_half";
    OverrideFlags overrides;
    uint32_t vocab = 0, window = 0, rotary_dim = 0;
    double rope_theta = 10000.0;
    float softcap = 0.0f, scale = 0.0f;
    bool causal = false, check = false;
    CLI::Option* scale_opt = nullptr;
    CLI::Option* rotary_opt = nullptr;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = run.add_subcommand("bdpa", "Basis-decomposed paged attention: build the cache on the GPU, then attend");
  cmd->add_option("--q", o->q, "Queries [B, S, H, D] (.npy, f32 or f16; already rotated)")->required();
  cmd->add_option("--k", o->k, "Keys before RoPE [B, C, Hkv, D] (.npy, f32 or f16)")->required();
  cmd->add_option("--v", o->v, "Values, shaped like --k")->required();
  cmd->add_option("--tokens", o->tokens, "Token id of every cache slot [B, C] (.npy, u32 or non-negative int)")
      ->required();
  cmd->add_option("--out", o->out, "Output [B, S, H, D] (.npy, Q's dtype)")->required();
  cmd->add_option("--vocab", o->vocab, "Token ids are below it (default: the largest id + 1)");
  o->rotary_opt = cmd->add_option("--rotary-dim", o->rotary_dim, "Leading elements of each key rotated (default D; 0: no RoPE)");
  cmd->add_option("--rope", o->rope, "Pairing of rotated elements")->check(CLI::IsMember({"rotate_half", "interleaved"}));
  cmd->add_option("--rope-theta", o->rope_theta, "RoPE base: angle pos * theta^(-2i / rotary_dim) (default 10000)");
  cmd->add_option("--kv-len", o->kv_len, "Keys per sequence: N or an .npy of B values (default C)");
  cmd->add_option("--start-pos", o->start_pos, "Position of query row 0: N or .npy (default kv_len - S)");
  cmd->add_flag("--causal", o->causal, "Hide keys after each query");
  cmd->add_option("--window", o->window, "Sliding window: hide keys at or before query_pos - N (0 = off)");
  cmd->add_option("--softcap", o->softcap, "Logit soft cap (0 = off)");
  o->scale_opt = cmd->add_option("--scale", o->scale, "Score scale (default 1/sqrt(D))");
  add_override_flags(cmd, o->overrides, "Force a BDPA variant (bdpa_*)", "A rejected --variant is an error, not a fallback");
  cmd->add_flag("--check", o->check, "Also judge the output with the float64 oracle (exact path and end to end)");
  cmd->callback([o, &g, &status] {
    const NpyInput q = read_float_npy(o->q, "q", 4, "[B, S, H, D]");
    const NpyInput k = read_float_npy(o->k, "k", 4, "[B, C, Hkv, D]");
    const NpyInput v = read_float_npy(o->v, "v", 4, "[B, C, Hkv, D]");
    if (v.shape != k.shape || v.dtype != k.dtype)
      bad_argument(fmt::format("v: expected {} {} (k's), got {} {}", to_string(k.dtype), shape_to_string(k.shape),
                      to_string(v.dtype), shape_to_string(v.shape)));
    if (k.shape[0] != q.shape[0] || k.shape[3] != q.shape[3])
      bad_argument(fmt::format("k: expected [{}, C, Hkv, {}] (q's batch and head dim), got {}", q.shape[0], q.shape[3],
                      shape_to_string(k.shape)));
    const io::NpyArray tok = io::read_npy(o->tokens);
    if (tok.shape != std::vector<uint64_t>{k.shape[0], k.shape[1]})
      bad_argument(fmt::format("tokens: expected shape [{}, {}], got {}", k.shape[0], k.shape[1], shape_to_string(tok.shape)));
    const std::vector<uint32_t> tokens = io::as_u32(tok);

    BdpaParams p;
    p.batch = uint32_t(q.shape[0]);
    p.seq_len = uint32_t(q.shape[1]);
    p.num_heads = uint32_t(q.shape[2]);
    p.head_dim = uint32_t(q.shape[3]);
    p.num_kv_heads = uint32_t(k.shape[2]);
    p.kv_capacity = uint32_t(k.shape[1]);
    p.num_basis = p.num_residual = p.batch * p.kv_capacity;
    p.causal = o->causal;
    p.window = o->window;
    p.softcap = o->softcap;
    if (*o->scale_opt) p.scale = o->scale;
    p.rotary_dim = *o->rotary_opt ? o->rotary_dim : p.head_dim;
    p.pairing = rope_pairing_from_string(o->rope);
    p.rope_positions = p.rotary_dim ? p.kv_capacity : 0;
    p.kv_len = per_sequence(o->kv_len, "kv-len", p.batch).value_or(std::vector<uint32_t>{p.kv_capacity});
    if (auto pos = per_sequence(o->start_pos, "start-pos", p.batch)) {
      p.start_pos = *pos;
    } else {
      p.start_pos.clear();
      for (uint32_t len : p.kv_len) p.start_pos.push_back(len >= p.seq_len ? len - p.seq_len : 0);
    }
    const BdpaBuildParams bp =
        check::build_params(p, o->vocab ? o->vocab : *std::max_element(tokens.begin(), tokens.end()) + 1);
    // The builder would skip such a slot (no query sees it); on the command line it is a mistake.
    for (size_t i = 0; i < tokens.size(); ++i)
      if (tokens[i] >= bp.vocab_size)
        bad_argument(fmt::format("tokens: expected ids below --vocab ({}), got {} at [{}][{}]", bp.vocab_size, tokens[i],
                        i / p.kv_capacity, i % p.kv_capacity));

    Context ctx(ContextOptions{g.device});
    const check::RopeTables rope = check::rope_tables(p.rope_positions, p.rotary_dim, o->rope_theta);
    BdpaBuildTensors bt = check::build_outputs(ctx, bp, k.dtype);
    bt.k = upload_npy(ctx, k);
    bt.v = upload_npy(ctx, v);
    bt.token_ids = ctx.tensor(DType::u32, {p.batch, p.kv_capacity});
    ctx.upload(bt.token_ids, tokens);
    BdpaTensors t = check::attention_tensors(bt);
    t.q = upload_npy(ctx, q);
    t.out = ctx.tensor(q.dtype, q.shape);
    if (p.rotary_dim) {
      t.rope_cos = ctx.tensor(DType::f32, {p.rope_positions, p.rotary_dim / 2});
      t.rope_sin = ctx.tensor(DType::f32, {p.rope_positions, p.rotary_dim / 2});
      ctx.upload(t.rope_cos, rope.cos);
      ctx.upload(t.rope_sin, rope.sin);
    }
    Recorder rec(ctx);
    bdpa_build(rec, bp, bt);
    const TextCallInfo info = bdpa_attention(rec, p, t, o->overrides.plan_options());
    rec.run();
    const io::NpyArray out = download_npy(ctx, t.out);
    io::write_npy(o->out, out);

    const uint32_t used = ctx.download_as<uint32_t>(bt.num_basis)[0];
    fmt::print("device: {}\n", ctx.caps().name);
    fmt::print("variant: {} ({})\n", info.variant, info.reason);
    for (const auto& w : info.warnings) fmt::print("warning: {}\n", w);
    fmt::print("basis rows: {} for {} slots; {} bytes per token per layer (int8 K and V, scales, index) + basis\n",
               used, bp.max_rows(), 2 * p.num_kv_heads * (p.head_dim + 4) + 12);
    fmt::print("wrote {} {} to {}\n", to_string(q.dtype), shape_to_string(q.shape), o->out);
    status = 0;
    if (o->check) {
      const std::vector<float> got = io::as_f32(out), qv = io::as_f32(q.array);
      const reference::BdpaCache cache = check::download_bdpa_cache(ctx, p, k.dtype, t);
      status |= report("exact path (oracle over the rebuilt cache)", got,
                       reference::bdpa_attention(p, qv, cache, rope.cos, rope.sin),
                       reference::tolerance_for(DType::f32, DType::f32, q.dtype));  // the values the kernel read: only its arithmetic and output rounding remain
      status |= report("end to end (unquantized cache, int8 bound)", got,
                       reference::bdpa_unquantized(p, qv, io::as_f32(k.array), io::as_f32(v.array), rope.cos, rope.sin),
                       reference::tolerance_for(q.dtype, DType::i8, q.dtype));
    }
  });
}

}  // namespace vkattn::cli

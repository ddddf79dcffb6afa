// `vkattn run text`: one text-attention call on .npy inputs, writing an .npy
// output; --check compares it with the float64 oracle.
//
//   q [B, S, H, D]; k, v [B, C, Hkv, D] (contiguous, ring) or the paged pool
//   [P, page_size, Hkv, D] with --page-table [B, max_pages]; f32 or f16 (f16
//   stays f16 on the GPU); the output has Q's dtype. Tiered: k, v are the cold
//   tier (contiguous or paged, --cold-layout) and --hot-k/--hot-v the f16 hot
//   ring [B, hot_window, Hkv, D]. --kv-dtype i8|i4 quantizes K/V into an
//   int8/int4 cache on the GPU first, or, with u32 K/V (packed words
//   [.., Hkv, packed_stride]) and --k-scale/--v-scale, reads a cache quantized
//   elsewhere (run_text_quant.cpp).
#include <fmt/format.h>

#include <charconv>
#include <cstring>
#include <optional>
#include <tuple>

#include "commands.hpp"
#include "run_text_quant.hpp"
#include "io/npy.hpp"
#include "planner/text_variants.hpp"
#include "reference/text_reference.hpp"
#include "reference/tolerance.hpp"
#include "vkattn/context.hpp"
#include "vkattn/error.hpp"
#include "vkattn/plan.hpp"
#include "vkattn/recorder.hpp"
#include "vkattn/text.hpp"

namespace vkattn::cli {

namespace {

DType float_dtype(const io::NpyArray& a, const char* name, const std::string& path) {
  if (a.descr == "<f4") return DType::f32;
  if (a.descr == "<f2") return DType::f16;
  bad_argument(fmt::format("{}: expected float32 ('<f4') or float16 ('<f2') in '{}', got '{}'", name, path, a.descr));
}

void expect_rank4(const io::NpyArray& a, const char* name, const char* layout) {
  if (a.shape.size() != 4)
    bad_argument(fmt::format("{}: expected a 4-d array {}, got shape {}", name, layout, shape_to_string(a.shape)));
  for (auto d : a.shape)
    if (d == 0 || d > UINT32_MAX) bad_argument(fmt::format("{}: expected dimensions in [1, 2^32), got shape {}", name, shape_to_string(a.shape)));
}

uint32_t at(const std::vector<uint32_t>& v, uint32_t b) { return v.size() == 1 ? v[0] : v[b]; }

Tensor upload(Context& ctx, DType t, const Shape& shape, const io::NpyArray& a) {
  Tensor tensor = ctx.tensor(t, shape);
  ctx.upload(tensor, a.data);
  return tensor;
}

}  // namespace

// "N" for every sequence, or an .npy of 1 or B non-negative integers (declared in commands.hpp).
std::optional<std::vector<uint32_t>> per_sequence(const std::string& value, const char* name, uint32_t batch) {
  if (value.empty()) return std::nullopt;
  uint32_t n = 0;
  auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (ec == std::errc() && ptr == value.data() + value.size()) return std::vector<uint32_t>{n};
  if (value.size() < 4 || value.compare(value.size() - 4, 4, ".npy") != 0)
    bad_argument(fmt::format("--{}: expected a non-negative integer or an .npy file, got '{}'", name, value));
  io::NpyArray a = io::read_npy(value);
  std::vector<uint32_t> v;
  try {
    v = io::as_u32(a);
  } catch (const Error& e) {
    bad_argument(fmt::format("--{}: expected non-negative integers in '{}': {}", name, value, e.what()));
  }
  if (v.size() != 1 && v.size() != batch)
    bad_argument(fmt::format("--{}: expected 1 or batch ({}) values in '{}', got {}", name, batch, value, v.size()));
  return v;
}

void add_run_text(CLI::App& run, GlobalOptions& g, int& status) {
  struct Opts {
    std::string q, k, v, out, layout = "contiguous", page_table, kv_len, start_pos, kv_start, kv_dtype, k_scale, v_scale;
    std::string cold_layout = "contiguous", hot_k, hot_v;
    uint32_t quant_group = 0;
    OverrideFlags overrides;
    uint32_t page_size = 0, window = 0;
    float softcap = 0.0f, scale = 0.0f;
    bool causal = false, check = false;
    CLI::Option* scale_opt = nullptr;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = run.add_subcommand("text", "Text-decoder attention (prefill or decode) over a KV cache");
  cmd->add_option("--q", o->q, "Queries [B, S, H, D] (.npy, f32 or f16)")->required();
  cmd->add_option("--k", o->k, "Keys [B, C, Hkv, D], or the paged pool [P, page_size, Hkv, D]")->required();
  cmd->add_option("--v", o->v, "Values, shaped like --k")->required();
  cmd->add_option("--out", o->out, "Output [B, S, H, D] (.npy, Q's dtype)")->required();
  cmd->add_option("--layout", o->layout, "KV layout")->check(CLI::IsMember({"contiguous", "ring", "paged", "tiered"}));
  cmd->add_option("--cold-layout", o->cold_layout, "Tiered: layout of the cold tier (--k, --v)")
      ->check(CLI::IsMember({"contiguous", "paged"}));
  cmd->add_option("--hot-k", o->hot_k, "Tiered: hot ring keys [B, hot_window, Hkv, D] (.npy, f16)");
  cmd->add_option("--hot-v", o->hot_v, "Tiered: hot ring values, shaped like --hot-k");
  cmd->add_option("--page-table", o->page_table, "Paged: page table [B, max_pages] (.npy, u32 or non-negative int)");
  cmd->add_option("--page-size", o->page_size, "Paged: keys per page (default: --k's second dimension)");
  cmd->add_option("--kv-len", o->kv_len,
                  "Keys per sequence: N or an .npy of B values (default: cache size minus kv_start; ring: C)");
  cmd->add_option("--start-pos", o->start_pos,
                  "Position of query row 0: N or .npy (default: kv_start + kv_len - S, the last S positions)");
  cmd->add_option("--kv-start", o->kv_start, "Position of key 0: N or .npy (default 0)");
  cmd->add_option("--kv-dtype", o->kv_dtype,
                  "Quantize --k/--v into an int8 or int4 cache on the GPU (kv_append) and attend over it")
      ->check(CLI::IsMember({"i8", "i4"}));
  cmd->add_option("--k-scale", o->k_scale, "Packed u32 K: its f16 scales [.., Hkv] or [.., Hkv, ceil(D/32)] (.npy '<f2')");
  cmd->add_option("--v-scale", o->v_scale, "Packed u32 V: its f16 scales");
  cmd->add_option("--quant-group", o->quant_group, "Quantized cache: 0 one scale per (token, KV head), 32 per 32 elements")
      ->check(CLI::IsMember({0, 32}));
  cmd->add_flag("--causal", o->causal, "Hide keys after each query");
  cmd->add_option("--window", o->window, "Sliding window: hide keys at or before query_pos - N (0 = off)");
  cmd->add_option("--softcap", o->softcap, "Logit soft cap (0 = off)");
  o->scale_opt = cmd->add_option("--scale", o->scale, "Score scale (default 1/sqrt(D))");
  add_override_flags(cmd, o->overrides, "Force a kernel variant (see `vkattn plan text`)", "A rejected --variant is an error, not a fallback");
  cmd->add_flag("--check", o->check, "Also compute the float64 oracle and print the max relative error");
  cmd->callback([o, &g, &status] {
    const KvLayout layout = kv_layout_from_string(o->layout);
    const bool tiered = layout == KvLayout::tiered;
    const KvLayout slots = tiered ? kv_layout_from_string(o->cold_layout) : layout;
    const bool paged = slots == KvLayout::paged;
    if (tiered != (!o->hot_k.empty() || !o->hot_v.empty()) || o->hot_k.empty() != o->hot_v.empty())
      bad_argument(fmt::format("hot_k: expected --hot-k and --hot-v {} for --layout {}, got {}", tiered ? "both" : "neither",
                      o->layout, o->hot_k.empty() ? "--hot-v only" : (o->hot_v.empty() ? "--hot-k only" : "both")));
    const io::NpyArray q = io::read_npy(o->q), k = io::read_npy(o->k), v = io::read_npy(o->v);
    expect_rank4(q, "q", "[B, S, H, D]");
    expect_rank4(k, "k", paged ? "[P, page_size, Hkv, D]" : "[B, C, Hkv, D]");
    if (v.shape != k.shape)
      bad_argument(fmt::format("v: expected the shape of k {}, got {}", shape_to_string(k.shape), shape_to_string(v.shape)));
    if (tiered && !o->kv_dtype.empty())
      bad_argument(fmt::format("kv_dtype: expected none with --layout tiered (`vkattn run` reads float tiers), got {}",
                      o->kv_dtype));
    // u32 K/V: a cache quantized already (doppler's packed words), with --k-scale/--v-scale.
    const bool packed = k.descr == "<u4";
    if (packed && (o->kv_dtype.empty() || o->k_scale.empty() || o->v_scale.empty() || v.descr != "<u4"))
      bad_argument("k: expected --kv-dtype i8|i4, --k-scale and --v-scale with packed u32 K/V ('<u4'), got "
          "some missing (or float V)");
    if (!packed && (!o->k_scale.empty() || !o->v_scale.empty()))
      bad_argument("k_scale: expected none for float K/V (--kv-dtype quantizes them), got --k-scale/--v-scale");
    const DType qt = float_dtype(q, "q", o->q);
    const DType kt = packed ? dtype_from_string(o->kv_dtype) : float_dtype(k, "k", o->k);
    const DType vt = packed ? kt : float_dtype(v, "v", o->v);
    if (vt != kt) bad_argument(fmt::format("v: expected the dtype of k ({}), got {}", to_string(kt), to_string(vt)));

    TextAttentionParams p;
    p.batch = static_cast<uint32_t>(q.shape[0]);
    p.seq_len = static_cast<uint32_t>(q.shape[1]);
    p.num_heads = static_cast<uint32_t>(q.shape[2]);
    p.head_dim = static_cast<uint32_t>(q.shape[3]);
    p.num_kv_heads = static_cast<uint32_t>(k.shape[2]);
    if (!packed && k.shape[3] != q.shape[3])
      bad_argument(fmt::format("k: expected head_dim {} (q's last dimension), got {}", q.shape[3], k.shape[3]));
    p.layout = layout;
    p.causal = o->causal;
    p.window = o->window;
    p.softcap = o->softcap;
    if (*o->scale_opt) p.scale = o->scale;
    io::NpyArray hot_k, hot_v;
    if (tiered) {
      p.cold_layout = slots;
      hot_k = io::read_npy(o->hot_k);
      hot_v = io::read_npy(o->hot_v);
      expect_rank4(hot_k, "hot_k", "[B, hot_window, Hkv, D]");
      if (hot_v.shape != hot_k.shape)
        bad_argument(fmt::format("hot_v: expected the shape of hot_k {}, got {}", shape_to_string(hot_k.shape),
                        shape_to_string(hot_v.shape)));
      for (auto [name, a, path] : {std::tuple{"hot_k", &hot_k, &o->hot_k}, {"hot_v", &hot_v, &o->hot_v}})
        if (float_dtype(*a, name, *path) != DType::f16)
          bad_argument(fmt::format("{}: expected float16 ('<f2', the hot ring) in '{}', got '{}'", name, *path, a->descr));
      p.hot_window = static_cast<uint32_t>(hot_k.shape[1]);
    }

    std::vector<uint32_t> table;
    uint64_t cache = 0;  // key slots a sequence can address
    if (paged) {
      if (o->page_table.empty()) bad_argument("page_table: expected --page-table FILE.npy for --layout paged, got none");
      const io::NpyArray t = io::read_npy(o->page_table);
      if (t.shape.size() != 2 || t.shape[0] != p.batch || t.shape[1] == 0)
        bad_argument(fmt::format("page_table: expected shape [{}, max_pages], got {}", p.batch, shape_to_string(t.shape)));
      table = io::as_u32(t);
      p.num_pages = static_cast<uint32_t>(k.shape[0]);
      p.kv_capacity = static_cast<uint32_t>(k.shape[1]);
      if (o->page_size && o->page_size != p.kv_capacity)
        bad_argument(fmt::format("page_size: expected {} (the second dimension of k {}), got {}", p.kv_capacity,
                        shape_to_string(k.shape), o->page_size));
      p.max_pages = static_cast<uint32_t>(t.shape[1]);
      cache = uint64_t(p.max_pages) * p.kv_capacity;
    } else {
      if (!o->page_table.empty() || o->page_size)
        bad_argument(fmt::format("page_table: expected none for the {} layout, got --page-table/--page-size",
                        to_string(slots)));
      if (k.shape[0] != p.batch)
        bad_argument(fmt::format("k: expected batch {} (q's first dimension) in [B, C, Hkv, D], got shape {}", p.batch,
                        shape_to_string(k.shape)));
      p.kv_capacity = static_cast<uint32_t>(k.shape[1]);
      cache = p.kv_capacity;
    }

    p.kv_start = per_sequence(o->kv_start, "kv-start", p.batch).value_or(std::vector<uint32_t>{0});
    if (auto lens = per_sequence(o->kv_len, "kv-len", p.batch)) {
      p.kv_len = *lens;
    } else {
      p.kv_len.clear();
      for (uint32_t b = 0; b < (p.kv_start.size() == 1 ? 1 : p.batch); ++b) {
        const uint64_t start = at(p.kv_start, b);
        if (layout == KvLayout::ring) {
          p.kv_len.push_back(p.kv_capacity);
        } else {
          if (start > cache)
            bad_argument(fmt::format("kv_start: expected <= the cache's {} key slots, got {} for sequence {}", cache, start,
                            b));
          // max_pages x page_size may pass 2^32: never truncate it into a shorter length.
          if (cache - start > UINT32_MAX)
            bad_argument(fmt::format("kv_len: expected the default (cache slots {} - kv_start {}) below 2^32, got {}; pass "
                            "--kv-len",
                            cache, start, cache - start));
          p.kv_len.push_back(static_cast<uint32_t>(cache - start));
        }
      }
    }
    if (auto pos = per_sequence(o->start_pos, "start-pos", p.batch)) {
      p.start_pos = *pos;
    } else {
      p.start_pos.clear();
      const uint32_t n = (p.kv_len.size() == 1 && p.kv_start.size() == 1) ? 1 : p.batch;
      for (uint32_t b = 0; b < n; ++b) {
        const uint64_t end = uint64_t(at(p.kv_start, b)) + at(p.kv_len, b);
        p.start_pos.push_back(static_cast<uint32_t>(end >= p.seq_len ? end - p.seq_len : 0));
      }
    }
    if (paged) check_page_table(p, table);

    Context ctx(ContextOptions{g.device});
    const Shape qshape{q.shape.begin(), q.shape.end()};
    const Shape kshape{k.shape.begin(), k.shape.end()};
    TextAttentionTensors t;
    t.q = upload(ctx, qt, qshape, q);
    std::optional<QuantizedCache> quant;
    if (packed) {
      p.kv_quant_group = o->quant_group;
      quant = load_packed_cache(ctx, k, v, io::read_npy(o->k_scale), io::read_npy(o->v_scale), kt, p.head_dim,
                                o->quant_group);
      t.k = quant->k;
      t.v = quant->v;
      t.k_scale = quant->k_scale;
      t.v_scale = quant->v_scale;
    } else {
      t.k = upload(ctx, kt, kshape, k);
      t.v = upload(ctx, kt, kshape, v);
    }
    t.out = ctx.tensor(qt, qshape);
    if (tiered) {
      const Shape hshape{hot_k.shape.begin(), hot_k.shape.end()};
      t.hot_k = upload(ctx, DType::f16, hshape, hot_k);
      t.hot_v = upload(ctx, DType::f16, hshape, hot_v);
    }
    if (paged) {
      t.page_table = ctx.tensor(DType::u32, {p.batch, p.max_pages});
      ctx.upload(t.page_table, table);
    }
    const DType cache_dtype = o->kv_dtype.empty() ? kt : dtype_from_string(o->kv_dtype);
    if (!o->kv_dtype.empty() && !packed) {
      p.kv_quant_group = o->quant_group;
      quant = quantize_cache(ctx, t.k, t.v, cache_dtype, o->quant_group);
      t.k = quant->k;
      t.v = quant->v;
      t.k_scale = quant->k_scale;
      t.v_scale = quant->v_scale;
    }
    const PlanOptions opts = o->overrides.plan_options();
    Recorder rec(ctx);
    const TextCallInfo info = text_attention(rec, p, t, opts);
    rec.run();

    io::NpyArray out;
    out.descr = qt == DType::f16 ? "<f2" : "<f4";
    out.shape = q.shape;
    out.data.resize(t.out.bytes());
    ctx.download(t.out, out.data);
    io::write_npy(o->out, out);

    fmt::print("device: {}\n", ctx.caps().name);
    fmt::print("variant: {} ({})\n", info.variant, info.reason);
    for (const auto& w : info.warnings) fmt::print("warning: {}\n", w);
    fmt::print("wrote {} {} to {}\n", to_string(qt), shape_to_string(out.shape), o->out);
    status = 0;
    // Quantized caches: at the precision the dequantized values reach the kernel's products.
    const auto quant_tol =
        reference::tolerance_for(qt, planner::kv_precision(planner::find_text_variant(info.variant), qt, cache_dtype), qt);
    if (o->check && packed) {
      // No original data: the oracle over the values the kernel reads.
      const auto want = reference::text_attention(p, io::as_f32(q), quant->k_values, quant->v_values, table);
      const auto r = reference::compare(io::as_f32(out), want, quant_tol);
      fmt::print("max relative error vs float64 oracle over the dequantized cache: {:.3e} (tolerance {:.1e}) {}\n",
                 r.rel_err, quant_tol.abs_rel, r.passed ? "PASS" : "FAIL");
      status = r.passed ? 0 : 1;
    } else if (o->check && quant) {
      const bool ok = check_quantized(p, quant_tol, io::as_f32(q), io::as_f32(k), io::as_f32(v), *quant, cache_dtype,
                                      io::as_f32(out), table);
      status = ok ? 0 : 1;
    } else if (o->check) {
      const auto want = reference::text_attention(p, io::as_f32(q), io::as_f32(k), io::as_f32(v), table,
                                                  tiered ? io::as_f32(hot_k) : std::vector<float>{},
                                                  tiered ? io::as_f32(hot_v) : std::vector<float>{});
      const auto tol = reference::tolerance_for(qt, kt, qt);
      const auto r = reference::compare(io::as_f32(out), want, tol);
      fmt::print("max relative error vs float64 oracle: {:.3e} (tolerance {:.1e}) {}\n", r.rel_err, tol.abs_rel,
                 r.passed ? "PASS" : "FAIL");
      status = r.passed ? 0 : 1;
    }
  });
}

}  // namespace vkattn::cli

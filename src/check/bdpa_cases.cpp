#include "check/bdpa_cases.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include "check/host_tensor.hpp"
#include "check/timing.hpp"
#include "planner/bdpa_planner.hpp"
#include "vkattn/error.hpp"
#include "vkattn/recorder.hpp"

namespace vkattn::check {

RopeTables rope_tables(uint32_t positions, uint32_t rotary_dim, double theta) {
  RopeTables t;
  const uint32_t half = rotary_dim / 2;
  t.cos.resize(uint64_t(positions) * half);
  t.sin.resize(t.cos.size());
  for (uint64_t p = 0; p < positions; ++p)
    for (uint32_t i = 0; i < half; ++i) {
      const double angle = double(p) * std::pow(theta, -2.0 * i / rotary_dim);
      t.cos[p * half + i] = static_cast<float>(std::cos(angle));
      t.sin[p * half + i] = static_cast<float>(std::sin(angle));
    }
  return t;
}

std::string describe(const BdpaCase& c) {
  const auto& p = c.params;
  std::string s = fmt::format("bdpa B{} S{} H{}/{} D{} L{} vocab {} q={} basis={} o={} rope {}{}", p.batch,
                              p.seq_len, p.num_heads, p.num_kv_heads, p.head_dim, fmt::join(p.kv_len, ","), c.vocab,
                              to_string(c.q), to_string(c.basis), to_string(c.out), p.rotary_dim,
                              p.rotary_dim ? std::string(" ") + std::string(to_string(p.pairing)) : "");
  if (p.causal) s += " causal";
  if (p.window) s += fmt::format(" window={}", p.window);
  if (p.softcap > 0) s += fmt::format(" softcap={}", p.softcap);
  if (c.gpu_lengths) s += " gpu-lens";
  if (c.shuffle_index) s += " shuffled";
  if (c.position_offset) s += fmt::format(" offset={}", c.position_offset);
  if (c.spread != 0.3f) s += fmt::format(" spread={}", c.spread);
  return s;
}

reference::BdpaCache download_bdpa_cache(Context& ctx, const BdpaParams& p, DType basis, const BdpaTensors& t) {
  reference::BdpaCache cache;
  const uint64_t basis_elems = uint64_t(p.num_basis) * p.num_kv_heads * p.head_dim;
  const uint64_t res_elems = uint64_t(p.num_residual) * p.num_kv_heads * p.head_dim;
  cache.basis_k = host::from_storage(basis, ctx.download_as<std::byte>(t.basis_k), basis_elems);
  cache.basis_v = host::from_storage(basis, ctx.download_as<std::byte>(t.basis_v), basis_elems);
  for (auto [dst, src] : {std::pair{&cache.residual_k, &t.residual_k}, {&cache.residual_v, &t.residual_v}}) {
    const auto bytes = ctx.download_as<int8_t>(*src);  // little-endian lanes: byte i is element i
    dst->assign(bytes.begin(), bytes.begin() + res_elems);
  }
  cache.scale_k = ctx.download_as<float>(t.residual_k_scale);
  cache.scale_v = ctx.download_as<float>(t.residual_v_scale);
  cache.index = ctx.download_as<uint32_t>(t.index);
  return cache;
}

BdpaBuildParams build_params(const BdpaParams& p, uint32_t vocab) {
  BdpaBuildParams bp;
  bp.batch = p.batch;
  bp.kv_capacity = p.kv_capacity;
  bp.num_kv_heads = p.num_kv_heads;
  bp.head_dim = p.head_dim;
  bp.vocab_size = vocab;
  bp.kv_len = p.kv_len;
  return bp;
}

BdpaBuildTensors build_outputs(Context& ctx, const BdpaBuildParams& bp, DType basis) {
  const Shape rows{bp.max_rows(), bp.num_kv_heads, bp.head_dim};
  BdpaBuildTensors t;
  t.basis_k = ctx.tensor(basis, rows);
  t.basis_v = ctx.tensor(basis, rows);
  t.residual_k = ctx.tensor(DType::i8, rows);
  t.residual_v = ctx.tensor(DType::i8, rows);
  t.residual_k_scale = ctx.tensor(DType::f32, {rows[0], bp.num_kv_heads});
  t.residual_v_scale = ctx.tensor(DType::f32, {rows[0], bp.num_kv_heads});
  t.index = ctx.tensor(DType::u32, {bp.batch, bp.kv_capacity, 3});
  t.num_basis = ctx.tensor(DType::u32, {1});
  return t;
}

BdpaTensors attention_tensors(const BdpaBuildTensors& bt) {
  BdpaTensors t;
  t.basis_k = bt.basis_k;
  t.basis_v = bt.basis_v;
  t.residual_k = bt.residual_k;
  t.residual_v = bt.residual_v;
  t.residual_k_scale = bt.residual_k_scale;
  t.residual_v_scale = bt.residual_v_scale;
  t.index = bt.index;
  t.kv_len = bt.kv_len;
  return t;
}

namespace {

// The basis row each valid position's token must get: its rank among the
// distinct tokens present (basis rows follow token-id order).
std::string check_basis_rows(const BdpaParams& p, const std::vector<uint32_t>& tokens, uint32_t num_basis,
                             const std::vector<uint32_t>& index) {
  std::set<uint32_t> present;
  for (uint32_t b = 0; b < p.batch; ++b)
    for (uint32_t j = 0; j < p.kv_len_of(b); ++j) present.insert(tokens[uint64_t(b) * p.kv_capacity + j]);
  if (num_basis != present.size())
    return fmt::format("num_basis: expected {} (distinct token ids), got {}", present.size(), num_basis);
  const std::vector<uint32_t> order(present.begin(), present.end());
  for (uint32_t b = 0; b < p.batch; ++b)
    for (uint32_t j = 0; j < p.kv_len_of(b); ++j) {
      const uint64_t f = uint64_t(b) * p.kv_capacity + j;
      const uint32_t want = uint32_t(std::lower_bound(order.begin(), order.end(), tokens[f]) - order.begin());
      if (index[f * 3] != want || index[f * 3 + 1] != f || index[f * 3 + 2] != j)
        return fmt::format("index[{}][{}]: expected ({}, {}, {}), got ({}, {}, {})", b, j, want, f, j, index[f * 3],
                           index[f * 3 + 1], index[f * 3 + 2]);
    }
  return "";
}

}  // namespace

CheckResult run_bdpa_case(Context& ctx, const BdpaCase& c, const RunOptions& options) {
  CheckResult r;
  r.name = c.name.empty() ? describe(c) : c.name;
  // The exact-path oracle reads the very values the kernel read (Q, basis,
  // residuals as stored), so only f32 arithmetic and the output's rounding remain.
  r.tol = reference::tolerance_for(DType::f32, DType::f32, c.out);
  try {
    BdpaParams p = c.params;
    const uint32_t B = p.batch, C = p.kv_capacity, Hkv = p.num_kv_heads, D = p.head_dim;
    p.num_basis = p.num_residual = B * C;
    p.rope_positions = p.rotary_dim ? C + c.position_offset : 0;
    std::mt19937 rng(c.seed);

    // Rows of one token are its embedding plus a smaller per-position part:
    // what makes a shared basis row worth having.
    std::uniform_int_distribution<uint32_t> token_dist(0, c.vocab - 1);
    std::vector<uint32_t> tokens(uint64_t(B) * C);
    for (auto& t : tokens) t = token_dist(rng);
    const uint64_t row = uint64_t(Hkv) * D;
    auto rows_of_tokens = [&]() {
      std::map<uint32_t, std::vector<float>> emb;  // of the tokens present only (the vocabulary may be large)
      for (uint32_t t : tokens) emb.emplace(t, std::vector<float>());
      for (auto& [t, e] : emb) e = host::gaussian(rng, row, 1.0f);
      std::vector<float> x = host::gaussian(rng, tokens.size() * row, c.spread);
      for (uint64_t f = 0; f < tokens.size(); ++f)
        for (uint64_t e = 0; e < row; ++e) x[f * row + e] += emb[tokens[f]][e];
      return x;
    };
    const host::Values k = host::to_storage(c.basis, rows_of_tokens());
    const host::Values v = host::to_storage(c.basis, rows_of_tokens());
    const Shape q_shape{B, p.seq_len, p.num_heads, D};
    const host::Values q = host::to_storage(c.q, host::gaussian(rng, B * uint64_t(p.seq_len) * p.num_heads * D, c.logit_scale));
    const RopeTables rope = rope_tables(p.rope_positions, p.rotary_dim);

    const BdpaBuildParams bp = build_params(p, c.vocab);
    BdpaBuildTensors bt = build_outputs(ctx, bp, c.basis);
    bt.k = host::upload(ctx, c.basis, {B, C, Hkv, D}, k.bytes);
    bt.v = host::upload(ctx, c.basis, {B, C, Hkv, D}, v.bytes);
    bt.token_ids = host::upload_u32(ctx, tokens).reshaped({B, C});
    if (c.gpu_lengths) bt.kv_len = host::upload_u32(ctx, host::per_batch(p.kv_len, B));
    BdpaTensors t = attention_tensors(bt);
    t.q = host::upload(ctx, c.q, q_shape, q.bytes);
    t.out = ctx.tensor(c.out, q_shape);
    if (p.rotary_dim) {
      t.rope_cos = host::upload(ctx, DType::f32, {p.rope_positions, p.rotary_dim / 2}, host::to_storage(DType::f32, rope.cos).bytes);
      t.rope_sin = host::upload(ctx, DType::f32, {p.rope_positions, p.rotary_dim / 2}, host::to_storage(DType::f32, rope.sin).bytes);
    }
    if (c.gpu_lengths) t.start_pos = host::upload_u32(ctx, host::per_batch(p.start_pos, B));
    PlanOptions po;
    po.variant = c.variant;
    po.strict = !c.variant.empty();
    po.splits = c.splits;

    // Build and attend in one recording (the cache never visits the host),
    // unless the case edits the index in between.
    const bool edits_index = c.shuffle_index || c.position_offset;
    Recorder rec(ctx);
    bdpa_build(rec, bp, bt);
    if (edits_index) {
      rec.run();
      std::vector<uint32_t> index = ctx.download_as<uint32_t>(t.index);
      for (uint32_t b = 0; b < B; ++b) {
        uint32_t* first = &index[uint64_t(b) * C * 3];
        const uint32_t n = p.kv_len_of(b);
        std::vector<uint32_t> order(n);
        std::iota(order.begin(), order.end(), 0u);
        if (c.shuffle_index) std::shuffle(order.begin(), order.end(), rng);
        std::vector<uint32_t> moved(first, first + uint64_t(n) * 3);
        for (uint32_t j = 0; j < n; ++j) {
          std::copy_n(&moved[order[j] * 3], 3, first + uint64_t(j) * 3);
          first[j * 3 + 2] += c.position_offset;
        }
      }
      ctx.upload(t.index, index);
      rec.reset();
    }
    const TextCallInfo info = bdpa_attention(rec, p, t, po);
    r.variant = info.variant;
    r.reason = info.reason;
    rec.run();
    const std::vector<float> got = host::from_storage(c.out, ctx.download_as<std::byte>(t.out), q.values.size());

    // The bytes a decode step must read per key: int8 K and V rows, their scales and the index entry.
    uint64_t keys = 0;
    for (uint32_t b = 0; b < B; ++b) keys += p.kv_len_of(b);
    r.bytes_moved = double(keys) * (2.0 * Hkv * (D + 4) + 12) + double(q.bytes.size()) * 2;
    if (options.timed_runs > 0 && ctx.caps().timestamps) {
      // More caches built from the same inputs (and outputs of their own) to
      // rotate among, so repeats read memory rather than the last-level cache;
      // a case that edited its index times that one cache.
      std::vector<BdpaTensors> sets{t};
      Recorder builds(ctx);  // every copy's build in one submit
      for (uint32_t i = 1; !edits_index && i < rotation_sets(uint64_t(r.bytes_moved)); ++i) {
        BdpaBuildTensors copy = build_outputs(ctx, bp, c.basis);
        copy.k = bt.k;
        copy.v = bt.v;
        copy.token_ids = bt.token_ids;
        copy.kv_len = bt.kv_len;
        bdpa_build(builds, bp, copy);
        BdpaTensors set = attention_tensors(copy);
        set.q = t.q;
        set.out = ctx.tensor(c.out, q_shape);
        set.rope_cos = t.rope_cos;
        set.rope_sin = t.rope_sin;
        set.start_pos = t.start_pos;
        sets.push_back(set);
      }
      if (sets.size() > 1) builds.run();
      r.input_sets = uint32_t(sets.size());
      const ReplayTiming timing = time_back_to_back(
          ctx, [&](Recorder& into, uint32_t i) { bdpa_attention(into, p, sets[i % sets.size()], po); },
          options.timed_runs);
      r.gpu_ms = timing.median_ms;
      r.gpu_min_ms = timing.min_ms;
      r.gpu_max_ms = timing.max_ms;
    }
    r.flops = 4.0 * double(keys) * p.seq_len * p.num_heads * D;
    if (options.skip_oracle) {
      r.passed = true;
      return r;
    }

    const reference::BdpaCache cache = download_bdpa_cache(ctx, p, c.basis, t);
    if (!edits_index) {
      const std::string wrong = check_basis_rows(p, tokens, ctx.download_as<uint32_t>(bt.num_basis)[0], cache.index);
      if (!wrong.empty()) {
        r.error = "builder: " + wrong;
        return r;
      }
    }
    r.cmp = reference::compare(got, reference::bdpa_attention(p, q.values, cache, rope.cos, rope.sin), r.tol);
    r.passed = r.cmp.passed;
    if (r.passed && !c.position_offset) {
      // End to end: the model's own cache, rotated once, unquantized.
      const reference::Tolerance bound = reference::tolerance_for(c.q, DType::i8, c.out);
      const auto e2e = reference::compare(
          got, reference::bdpa_unquantized(p, q.values, k.values, v.values, rope.cos, rope.sin), bound);
      if (!e2e.passed) {
        r.passed = false;
        r.error = "end to end against the unquantized cache: " + reference::to_string(e2e, bound);
      }
    }
  } catch (const std::exception& e) {
    r.error = e.what();
    r.passed = false;
  }
  return r;
}

namespace {

BdpaCase make_bdpa_case(uint32_t b, uint32_t s, uint32_t h, uint32_t hkv, uint32_t d, uint32_t len) {
  BdpaCase c;
  c.params.batch = b;
  c.params.seq_len = s;
  c.params.num_heads = h;
  c.params.num_kv_heads = hkv;
  c.params.head_dim = d;
  c.params.kv_capacity = len;
  c.params.kv_len = {len};
  c.params.start_pos = {len - s};
  c.params.causal = true;
  c.params.rotary_dim = d;
  return c;
}

}  // namespace

std::vector<BdpaCase> bdpa_check_grid(const DeviceCaps& caps, GridSize size) {
  std::vector<BdpaCase> grid;
  uint32_t seed = 100;
  auto add = [&](BdpaCase c) {
    c.seed = seed++;
    grid.push_back(std::move(c));
  };
  // 1. Every variant, forced, on a shape with GQA, two sequence lengths and a partial last tile.
  for (const auto& v : planner::bdpa_variants()) {
    const bool decode = v.phase == Phase::decode;
    BdpaCase c = decode ? make_bdpa_case(2, 1, 8, 2, 64, 77) : make_bdpa_case(1, 19, 4, 2, 64, 40);
    if (decode) c.params.kv_len = {77, 50}, c.params.start_pos = {76, 49};
    c.q = v.q;
    c.basis = v.basis;
    c.out = v.q;
    c.variant = v.name;
    c.logit_scale = 2.0f;
    if (v.split) c.splits = 3;
    planner::BdpaShape shape{c.params.batch, c.params.seq_len, c.params.num_heads, c.params.num_kv_heads,
                             c.params.head_dim, 77, c.q, c.basis};
    if (!planner::bdpa_geometry(v, caps, shape).geometry) continue;  // the device cannot run it
    c.name = fmt::format("{} B{} S{} H8/2 D64", v.name, c.params.batch, c.params.seq_len);
    add(c);
  }
  // 2. RoPE options: interleaved pairs, a partial rotary dim, none.
  {
    BdpaCase c = make_bdpa_case(1, 1, 4, 1, 64, 90);
    c.params.pairing = RopePairing::interleaved;
    c.params.rotary_dim = 32;
    add(c);
    c.params.pairing = RopePairing::rotate_half;
    add(c);
    c.params.rotary_dim = 0;
    add(c);
  }
  // 3. Head dims and GQA ratios, planner's choice, decode and prefill.
  for (uint32_t d : {32u, 128u, 256u}) {
    BdpaCase c = make_bdpa_case(1, 1, 8, 2, d, 70);
    c.basis = DType::f16;
    add(c);
    BdpaCase pre = make_bdpa_case(1, 12, 4, 4, d, 30);
    pre.q = pre.basis = pre.out = DType::f16;
    add(pre);
  }
  // 4. Masks and scoring: a sliding window with softcap and an explicit scale, in prefill and split decode.
  {
    BdpaCase c = make_bdpa_case(1, 16, 4, 2, 64, 48);
    c.params.window = 7;
    c.params.softcap = 20.0f;
    c.params.scale = 0.2f;
    c.logit_scale = 4.0f;
    add(c);
    BdpaCase d = make_bdpa_case(2, 1, 4, 2, 64, 300);
    d.params.window = 100;
    d.params.kv_len = {300, 120};
    d.params.start_pos = {299, 119};
    d.splits = 4;
    d.variant = "bdpa_decode_split_f16kv";
    add(d);
  }
  // 5. Fully masked rows: keys moved past the early queries (they output zeros),
  //    and a sequence with no keys in a batch.
  {
    BdpaCase c = make_bdpa_case(1, 10, 2, 1, 64, 24);
    c.params.start_pos = {0};
    c.position_offset = 6;
    add(c);
    BdpaCase e = make_bdpa_case(2, 1, 4, 2, 64, 40);
    e.params.kv_len = {0, 40};
    e.params.start_pos = {0, 39};
    add(e);
  }
  // 6. Residuals far past +-1 (each row's own scale, no clipping), and rows of
  //    no shared part at all.
  for (float spread : {4.0f, 25.0f}) {
    BdpaCase c = make_bdpa_case(1, 1, 4, 2, 64, 120);
    c.spread = spread;
    c.basis = DType::f32;
    add(c);
  }
  // 7. The index, not the slot, carries the position: entries shuffled.
  {
    BdpaCase c = make_bdpa_case(2, 5, 4, 2, 64, 60);
    c.params.kv_len = {60, 33};
    c.params.start_pos = {55, 28};
    c.shuffle_index = true;
    add(c);
  }
  // 8. Lengths and positions from GPU buffers, a batch of three, split decode.
  {
    BdpaCase c = make_bdpa_case(3, 1, 8, 2, 64, 200);
    c.params.kv_len = {200, 17, 129};
    c.params.start_pos = {199, 16, 128};
    c.gpu_lengths = true;
    add(c);
  }
  // 9. A long context (no length cap): split decode over many workgroups.
  {
    BdpaCase c = make_bdpa_case(1, 1, 4, 1, 64, size == GridSize::full ? 32768 : 4096);
    c.vocab = 500;
    add(c);
  }
  if (size == GridSize::full) {
    // Model-sized shapes for the GPU: Llama-3-8B decode over 32k keys for two
    // sequences (each f16 input 128 MiB, lavapipe's storage-buffer range), and
    // a 512-token prefill.
    BdpaCase d = make_bdpa_case(2, 1, 32, 8, 128, 32768);
    d.vocab = 32000;
    add(d);
    BdpaCase pre = make_bdpa_case(1, 512, 32, 8, 128, 512);
    pre.vocab = 32000;
    pre.q = pre.basis = pre.out = DType::f16;
    add(pre);
  }
  return grid;
}

std::vector<CheckCase> bdpa_check_cases(const DeviceCaps& caps, GridSize size) {
  std::vector<CheckCase> out;
  for (auto& c : bdpa_check_grid(caps, size)) {
    std::string name = c.name.empty() ? describe(c) : c.name;
    out.push_back({name, [c](Context& ctx, const RunOptions& o) { return run_bdpa_case(ctx, c, o); }});
  }
  return out;
}

std::vector<CheckCase> bdpa_demo_cases(DemoSize size) {
  const uint32_t context = size == DemoSize::cpu ? 1024 : 4096;
  BdpaCase c = make_bdpa_case(1, 1, 32, 8, 128, context);
  c.vocab = 32000;
  c.name = fmt::format("llama3-8b bdpa decode (H32/8 D128 L{} f16 basis, int8 residuals: {} B/token/layer + basis)",
                       context, 2 * 8 * (128 + 4) + 12);
  return {{c.name, [c](Context& ctx, const RunOptions& o) { return run_bdpa_case(ctx, c, o); }}};
}

}  // namespace vkattn::check

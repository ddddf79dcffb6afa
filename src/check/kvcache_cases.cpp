#include "check/kvcache_cases.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <random>
#include <stdexcept>

#include "check/host_tensor.hpp"
#include "ops/dtype_code.hpp"
#include "planner/text_variants.hpp"
#include "reference/kv_quant_reference.hpp"
#include "reference/rounding.hpp"
#include "reference/text_reference.hpp"
#include "shaders/kv_quant_interface.h"
#include "shaders/text_kv_tier.h"
#include "vkattn/kvcache.hpp"
#include "vkattn/plan.hpp"
#include "vkattn/recorder.hpp"

namespace vkattn::check {

namespace {

// Rows of varied magnitude, so scales differ: some rows zero (scale 1), some
// tiny (scales at the bottom of f16, never flushed to zero).
std::vector<float> kv_rows(std::mt19937& rng, size_t rows, uint32_t d) {
  std::vector<float> v = host::gaussian(rng, rows * d, 1.0f);
  std::uniform_real_distribution<float> mag(-2.0f, 2.0f);
  for (size_t r = 0; r < rows; ++r) {
    const float f = r % 7 == 3 ? 0.0f : r % 11 == 5 ? 1e-5f : r % 13 == 6 ? 1e-9f : std::exp(mag(rng));
    for (uint32_t i = 0; i < d; ++i) v[r * d + i] *= f;
  }
  return v;
}

// The chunks (first position, tokens) that write positions [0, length): a
// prefill of length - 1 tokens (in ring-sized pieces) and one decode token.
std::vector<std::pair<uint32_t, uint32_t>> chunks_of(const KvCacheCase& c) {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  const uint32_t piece = c.layout == KvLayout::ring ? c.capacity : c.length;
  for (uint32_t at = 0; at + 1 < c.length; at += std::min(piece, c.length - 1 - at))
    out.push_back({at, std::min(piece, c.length - 1 - at)});
  out.push_back({c.length - 1, 1});
  return out;
}

// The most rounding to `dtype` moved a value of each row of d values.
std::vector<double> rounding_row_error(DType dtype, uint32_t d, std::span<const float> rows) {
  std::vector<double> out(rows.size() / d, 0.0);
  for (size_t i = 0; i < rows.size(); ++i)
    out[i / d] = std::max(out[i / d], std::fabs(double(rows[i]) - reference::round_to(dtype, rows[i])));
  return out;
}

std::vector<double> concat(std::vector<double> a, const std::vector<double>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::vector<uint16_t> download_u16(Context& ctx, const Tensor& t, size_t n) {
  std::vector<uint16_t> out(n);
  ctx.download(t, std::as_writable_bytes(std::span(out)));
  return out;
}

// What the cache holds after the writes, checked against the reference:
// returns the values a kernel reads (dequantized), or throws naming the first
// element that differs. `raw` are the written values in cache order, `written`
// marks the rows written.
struct CacheContents {
  std::vector<float> values;
  std::vector<uint16_t> scales;
};

CacheContents check_cache(Context& ctx, const KvCacheCase& c, const char* name, const Tensor& cache,
                          const Tensor& scale, const std::vector<float>& raw, const std::vector<bool>& written) {
  const uint32_t d = c.head_dim;
  const size_t rows = written.size();
  CacheContents got;
  if (!is_quantized(c.cache)) {
    std::vector<std::byte> bytes(cache.bytes());
    ctx.download(cache, bytes);
    got.values = host::from_storage(c.cache, bytes, rows * d);
    // f16 is rounded by packHalf2x16, whose rounding is the driver's and which
    // may flush subnormals: one unit in the last place, or the subnormal range.
    const bool f16 = c.cache == DType::f16;
    const double ulp = f16 ? std::ldexp(1.0, -10) : 0.0, subnormal = f16 ? std::ldexp(1.0, -14) : 0.0;
    for (size_t i = 0; i < rows * d; ++i) {
      if (!written[i / d]) continue;
      const double want = reference::round_to(c.cache, raw[i]);
      if (std::fabs(got.values[i] - want) > std::max(ulp * std::fabs(want), subnormal))
        throw std::runtime_error(fmt::format("{} row {} element {}: expected {}, got {}", name, i / d, i % d, want,
                                             got.values[i]));
    }
    return got;
  }
  const uint32_t lanes = c.cache == DType::i8 ? KV_QUANT_INT8_LANES : KV_QUANT_INT4_LANES;
  const uint32_t cmax = kvquant::code_max(lanes), bits = 32 / lanes;
  const uint32_t stride = kvquant::packed_stride(lanes, d), groups = kvquant::scale_groups(c.quant_group, d);
  std::vector<uint32_t> words(rows * stride);
  ctx.download(cache, std::as_writable_bytes(std::span(words)));
  got.scales = download_u16(ctx, scale, rows * groups);
  const reference::QuantizedRows want = reference::quantize_rows(c.cache, c.quant_group, d, raw);
  for (size_t r = 0; r < rows; ++r) {
    if (!written[r]) continue;
    for (uint32_t i = 0; i < d; ++i) {
      const uint32_t g = c.quant_group == KV_QUANT_GROUP_ROW ? 0 : i / c.quant_group;
      const uint16_t sg = got.scales[r * groups + g], sw = want.scales[r * groups + g];
      // The kernel divides in f32 (not correctly rounded): its scale may be the f16 next to the reference's.
      if (std::abs(int(sg) - int(sw)) > 1)
        throw std::runtime_error(fmt::format("{} row {} scale {}: expected f16 bits {:#06x}, got {:#06x}", name, r, g, sw, sg));
      const double s = reference::f16_to_float(sg), x = raw[r * d + i];
      int32_t code = int32_t((words[r * stride + i / lanes] >> (bits * (i % lanes))) & ((1u << bits) - 1));
      if (code >= int32_t(1u << (bits - 1))) code -= int32_t(1u << bits);
      const int32_t expect = reference::quant_code(x, s, cmax);
      const double frac = x / s - std::floor(x / s);
      const bool near_tie = std::fabs(frac - 0.5) <= 1e-5 * std::max(1.0, std::fabs(x / s));
      if (code != expect && !(near_tie && std::abs(code - expect) == 1))
        throw std::runtime_error(fmt::format("{} row {} element {}: value {} with scale {}: expected code {}, got {}",
                                             name, r, i, x, s, expect, code));
    }
  }
  got.values = reference::dequantize_rows(c.cache, c.quant_group, d, words, got.scales);
  return got;
}

}  // namespace

std::string describe(const KvCacheCase& c) {
  std::string s = fmt::format("kvcache {} B{} H{}/{} D{} L{} S{} {}->{}{} q={}", to_string(c.layout), c.batch,
                              c.num_heads, c.num_kv_heads, c.head_dim, c.length, c.seq_len, to_string(c.src),
                              to_string(c.cache), c.quant_group ? fmt::format(" group{}", c.quant_group) : "",
                              to_string(c.q));
  if (c.layout == KvLayout::tiered) s += fmt::format(" cold {} hot {}", to_string(c.cold_layout), c.hot_window);
  if (c.gpu_positions) s += " gpu-positions";
  if (!c.variant.empty()) s += " " + c.variant;
  return s;
}

KvCacheResult run_kvcache_case(Context& ctx, const KvCacheCase& c) {
  KvCacheResult result;
  CheckResult& r = result.exact;
  r.name = describe(c);
  try {
    std::mt19937 rng(c.seed);
    const bool tiered = c.layout == KvLayout::tiered;
    const bool paged = (tiered ? c.cold_layout : c.layout) == KvLayout::paged;
    const uint32_t d = c.head_dim, hkv = c.num_kv_heads;
    const uint32_t num_pages = paged ? c.batch * c.max_pages : 0;
    const uint64_t slots = paged ? uint64_t(num_pages) * c.capacity : uint64_t(c.batch) * c.capacity;
    const uint64_t rows = slots * hkv;
    const Shape cache_shape = paged ? Shape{num_pages, c.capacity, hkv, d} : Shape{c.batch, c.capacity, hkv, d};

    // The cache, zeroed, and its page table (pages handed out interleaved across sequences).
    KvAppendTensors t;
    auto zeroed = [&](DType dt, Shape shape) {
      Tensor x = ctx.tensor(dt, shape);
      ctx.upload(x, std::vector<std::byte>(x.bytes()));
      return x;
    };
    t.cache_k = zeroed(c.cache, cache_shape);
    t.cache_v = zeroed(c.cache, cache_shape);
    Shape scale_shape(cache_shape.begin(), cache_shape.end() - 1);
    if (c.quant_group) scale_shape.push_back(kvquant::scale_groups(c.quant_group, d));
    if (is_quantized(c.cache)) {
      t.k_scale = zeroed(DType::f16, scale_shape);
      t.v_scale = zeroed(DType::f16, scale_shape);
    }
    // Tiered: the f16 hot ring, zeroed, and what it should hold.
    const uint64_t hot_rows = uint64_t(c.batch) * c.hot_window * hkv;
    if (tiered) {
      t.hot_k = zeroed(DType::f16, {c.batch, c.hot_window, hkv, d});
      t.hot_v = zeroed(DType::f16, {c.batch, c.hot_window, hkv, d});
    }
    std::vector<float> hot_raw_k(hot_rows * d, 0.0f), hot_raw_v(hot_rows * d, 0.0f);
    std::vector<bool> hot_written(hot_rows, false);
    std::optional<PageAllocator> pages;
    if (paged) {
      pages.emplace(ctx, num_pages, c.capacity, c.batch, c.max_pages);
      for (uint64_t len = c.capacity; len < uint64_t(c.length) + c.capacity; len += c.capacity)
        for (uint32_t b = 0; b < c.batch; ++b) pages->reserve(b, std::min<uint64_t>(len, c.length));
      t.page_table = pages->table();
    }

    // Write every chunk; keep the written values in cache order for the references.
    std::vector<float> raw_k(rows * d, 0.0f), raw_v(rows * d, 0.0f);
    std::vector<bool> written(rows, false);
    // The cache's shape, the same for the write and the attention call.
    auto cache_of = [&](auto& x) {
      x.batch = c.batch;
      x.num_kv_heads = hkv;
      x.head_dim = d;
      x.layout = c.layout;
      x.kv_capacity = c.capacity;
      x.num_pages = num_pages;
      x.max_pages = c.max_pages;
      x.cold_layout = c.cold_layout;
      x.hot_window = c.hot_window;
    };
    KvAppendParams ap;
    cache_of(ap);
    ap.quant_group = c.quant_group;
    ap.pages = paged ? &*pages : nullptr;
    for (auto [first, tokens] : chunks_of(c)) {
      const Shape src_shape{c.batch, tokens, hkv, d};
      host::Values k = host::to_storage(c.src, kv_rows(rng, uint64_t(c.batch) * tokens * hkv, d));
      host::Values v = host::to_storage(c.src, kv_rows(rng, uint64_t(c.batch) * tokens * hkv, d));
      KvAppendTensors chunk = t;
      chunk.k = host::upload(ctx, c.src, src_shape, k.bytes);
      chunk.v = host::upload(ctx, c.src, src_shape, v.bytes);
      ap.tokens = tokens;
      ap.positions = {first};
      if (c.gpu_positions && tokens == 1) chunk.positions = host::upload_u32(ctx, std::vector<uint32_t>(c.batch, first));
      Recorder rec(ctx);
      kv_append(rec, ap, chunk);
      rec.run();
      for (uint32_t b = 0; b < c.batch; ++b)
        for (uint32_t i = 0; i < tokens; ++i) {
          const uint32_t pos = first + i;
          const uint64_t slot = paged ? uint64_t(pages->host_table()[b * c.max_pages + pos / c.capacity]) * c.capacity +
                                            pos % c.capacity
                                      : uint64_t(b) * c.capacity + (c.layout == KvLayout::ring ? pos % c.capacity : pos);
          for (uint32_t h = 0; h < hkv; ++h) {
            const uint64_t src = ((uint64_t(b) * tokens + i) * hkv + h) * d, dst = (slot * hkv + h) * d;
            std::copy_n(k.values.begin() + src, d, raw_k.begin() + dst);
            std::copy_n(v.values.begin() + src, d, raw_v.begin() + dst);
            written[slot * hkv + h] = true;
            // The ring gets the last hot_window tokens of the chunk.
            if (!tiered || tokens - i > c.hot_window) continue;
            const uint64_t hot = (uint64_t(b) * c.hot_window + text::text_tier_hot_slot(pos, c.hot_window)) * hkv + h;
            std::copy_n(k.values.begin() + src, d, hot_raw_k.begin() + hot * d);
            std::copy_n(v.values.begin() + src, d, hot_raw_v.begin() + hot * d);
            hot_written[hot] = true;
          }
        }
    }
    const CacheContents ck = check_cache(ctx, c, "cache_k", t.cache_k, t.k_scale, raw_k, written);
    const CacheContents cv = check_cache(ctx, c, "cache_v", t.cache_v, t.v_scale, raw_v, written);
    KvCacheCase hot_case = c;  // the hot ring is an f16 cache of hot_window slots
    hot_case.cache = DType::f16;
    const CacheContents hk = tiered ? check_cache(ctx, hot_case, "hot_k", t.hot_k, {}, hot_raw_k, hot_written)
                                    : CacheContents{};
    const CacheContents hv = tiered ? check_cache(ctx, hot_case, "hot_v", t.hot_v, {}, hot_raw_v, hot_written)
                                    : CacheContents{};

    // Attention over the cache: the last seq_len positions as queries.
    TextAttentionParams p;
    cache_of(p);
    p.seq_len = c.seq_len;
    p.num_heads = c.num_heads;
    p.causal = true;
    const uint32_t visible = c.layout == KvLayout::ring ? std::min(c.length, c.capacity) : c.length;
    p.kv_len = {visible};
    p.kv_start = {c.length - visible};
    p.start_pos = {c.length - c.seq_len};
    p.kv_quant_group = c.quant_group;
    if (paged) pages->check_table(pages->host_table());
    const Shape q_shape{c.batch, c.seq_len, c.num_heads, d};
    host::Values q = host::to_storage(c.q, host::gaussian(rng, uint64_t(c.batch) * c.seq_len * c.num_heads * d, 1.0f));
    TextAttentionTensors at;
    at.q = host::upload(ctx, c.q, q_shape, q.bytes);
    at.k = t.cache_k;
    at.v = t.cache_v;
    at.k_scale = t.k_scale;
    at.v_scale = t.v_scale;
    at.out = ctx.tensor(c.q, q_shape);
    at.page_table = t.page_table;
    at.hot_k = t.hot_k;
    at.hot_v = t.hot_v;
    PlanOptions options;
    options.variant = c.variant;
    options.strict = !c.variant.empty();
    Recorder rec(ctx);
    const TextCallInfo info = text_attention(rec, p, at, options);
    rec.run();
    r.variant = info.variant;
    r.reason = info.reason;
    std::vector<std::byte> out_bytes(at.out.bytes());
    ctx.download(at.out, out_bytes);
    const std::vector<float> got = host::from_storage(c.q, out_bytes, q.values.size());
    const std::vector<uint32_t> table = paged ? pages->host_table() : std::vector<uint32_t>{};

    // Check 1: the oracle over exactly the values the kernel reads, at the
    // precision they reach its products (planner::kv_precision).
    r.tol = reference::tolerance_for(c.q, planner::kv_precision(planner::find_text_variant(info.variant), c.q, c.cache),
                                     c.q);
    r.cmp = reference::compare(got, reference::text_attention(p, q.values, ck.values, cv.values, table, hk.values, hv.values),
                               r.tol);
    r.passed = r.cmp.passed;
    // Check 2 (quantized): against the unquantized data, within the quantization bound plus the tolerance.
    if (is_quantized(c.cache)) {
      // The hot ring's keys moved by their f16 rounding only; the bound takes the largest error of both tiers.
      const std::vector<double> want =
          reference::text_attention(p, q.values, raw_k, raw_v, table, hot_raw_k, hot_raw_v);
      const std::vector<double> bound = reference::quant_attention_bound(
          p, q.values, raw_v,
          concat(reference::quant_row_error(c.cache, c.quant_group, d, raw_k, ck.scales),
                 rounding_row_error(DType::f16, d, hot_raw_k)),
          concat(reference::quant_row_error(c.cache, c.quant_group, d, raw_v, cv.scales),
                 rounding_row_error(DType::f16, d, hot_raw_v)));
      double max_want = 0.0;
      for (double w : want) max_want = std::max(max_want, std::fabs(w));
      double worst = -INFINITY;  // the largest err - allowed, and that element's err and allowance
      for (size_t i = 0; i < want.size(); ++i) {
        const double err = std::fabs(got[i] - want[i]), allowed = bound[i] + r.tol.abs_rel * max_want;
        const double margin = std::isnan(err) ? INFINITY : err - allowed;
        if (margin > worst) {
          worst = margin;
          result.e2e_err = std::isnan(err) ? INFINITY : err;
          result.e2e_bound = allowed;
        }
      }
      r.reason += fmt::format("; end to end {:.3g} within bound {:.3g}", result.e2e_err, result.e2e_bound);
    }
  } catch (const std::exception& e) {
    result.append_error = e.what();
    r.error = e.what();
    r.passed = false;
  }
  r.passed = result.passed();
  return result;
}

std::vector<KvCacheCase> kvcache_grid(const DeviceCaps& caps, GridSize size) {
  std::vector<KvCacheCase> out;
  const bool full = size == GridSize::full;
  auto add = [&](KvCacheCase c) { out.push_back(c); };
  // Every layout x cache dtype through the planner's decode and prefill choice.
  for (KvLayout layout : {KvLayout::contiguous, KvLayout::ring, KvLayout::paged})
    for (DType cache : {DType::f16, DType::bf16, DType::i8, DType::i4}) {
      KvCacheCase c;
      c.layout = layout;
      c.cache = cache;
      c.capacity = layout == KvLayout::ring ? 16 : layout == KvLayout::paged ? 8 : 48;
      c.max_pages = layout == KvLayout::paged ? 6 : 0;
      c.batch = 2;
      c.num_heads = 4;
      c.num_kv_heads = 2;
      c.gpu_positions = layout != KvLayout::contiguous;
      add(c);
      c.seq_len = 8;  // prefill over the cache
      add(c);
    }
  // Tiered: a prefill chunk longer than the hot ring (only its last hot_window
  // tokens reach the ring), then a decode token, into both cold layouts and
  // every cold dtype; the attention reads across the tier boundary.
  for (KvLayout cold : {KvLayout::contiguous, KvLayout::paged})
    for (DType cache : {DType::f16, DType::bf16, DType::i8, DType::i4}) {
      KvCacheCase c;
      c.layout = KvLayout::tiered;
      c.cold_layout = cold;
      c.hot_window = 16;
      c.cache = cache;
      c.capacity = cold == KvLayout::paged ? 8 : 48;
      c.max_pages = cold == KvLayout::paged ? 6 : 0;
      c.batch = 2;
      c.num_heads = 4;
      c.num_kv_heads = 2;
      c.gpu_positions = cache == DType::i8 || cache == DType::bf16;
      c.quant_group = cache == DType::i4 && cold == KvLayout::paged ? KV_QUANT_GROUP : 0;
      add(c);
      c.seq_len = 8;
      add(c);
    }
  {
    KvCacheCase c;  // a hot ring longer than the context: every key hot
    c.layout = KvLayout::tiered;
    c.hot_window = 64;
    c.src = DType::f16;
    add(c);
  }
  // Source dtypes, scale groups, Q dtypes, head dims.
  for (DType src : {DType::f16, DType::bf16}) {
    KvCacheCase c;
    c.src = src;
    c.q = src == DType::f16 ? DType::f16 : DType::f32;
    add(c);
  }
  for (DType cache : {DType::i8, DType::i4})
    for (uint32_t d : {40u, 64u, 128u}) {
      KvCacheCase c;
      c.cache = cache;
      c.head_dim = d;
      c.quant_group = KV_QUANT_GROUP;
      c.layout = KvLayout::paged;
      c.capacity = 16;
      c.max_pages = 3;
      add(c);
    }
  // Every row over quantized caches, forced. The tensor-core prefill rows
  // (and their emulated build) also over a ring of their widest rows and a tiered
  // cache whose f16 hot rows share tiles with the cold codes, with f16 Q.
  for (const auto& v : planner::text_variants()) {
    if (!is_quantized(v.kv) || v.q != DType::f32) continue;
    if (v.needs_subgroup_arithmetic && !caps.subgroup_arithmetic) continue;
    if (v.needs_subgroup_shuffle && !caps.subgroup_shuffle) continue;
    if (v.needs_cooperative_matrix && !caps.cooperative_matrix_nv) continue;
    if (v.engine == planner::Engine::flash_fragments) {
      KvCacheCase c;
      c.cache = v.kv;
      c.q = DType::f16;
      c.variant = v.family + "_" + planner::dtype_suffix(c.q, v.kv);
      c.seq_len = 7;
      c.num_heads = 4;
      c.num_kv_heads = 2;
      c.layout = KvLayout::ring;
      c.capacity = 32;
      c.head_dim = v.max_head_dim;  // 256 emulated; the tensor-core row's widest quantized rows
      add(c);
      c.layout = KvLayout::tiered;
      c.cold_layout = KvLayout::contiguous;
      c.capacity = 48;
      c.hot_window = 16;
      c.head_dim = 64;
      c.quant_group = KV_QUANT_GROUP;
      add(c);
      // A head dim that fragments pad (72 -> 80): the padded columns stage as zeros.
      c.layout = KvLayout::contiguous;
      c.capacity = 40;
      c.hot_window = 0;
      c.head_dim = 72;
      add(c);
    }
    KvCacheCase c;
    c.cache = v.kv;
    c.variant = v.name;
    c.layout = KvLayout::paged;
    c.capacity = 16;
    c.max_pages = 3;
    c.head_dim = v.min_head_dim > 64 ? 128 : 64;
    c.num_heads = 4;
    c.num_kv_heads = 2;
    c.seq_len = v.phase == Phase::decode ? 1 : 5;
    c.quant_group = v.kv == DType::i8 ? 0 : KV_QUANT_GROUP;
    add(c);
  }
  if (full)
    for (KvLayout layout : {KvLayout::contiguous, KvLayout::paged}) {
      KvCacheCase c;
      c.layout = layout;
      c.length = 3000;
      c.capacity = layout == KvLayout::paged ? 256 : 4096;
      c.max_pages = layout == KvLayout::paged ? 16 : 0;
      c.num_heads = 32;
      c.num_kv_heads = 8;
      c.head_dim = 128;
      add(c);
    }
  return out;
}

std::vector<CheckCase> kvcache_check_cases(const DeviceCaps& caps, GridSize size) {
  std::vector<CheckCase> out;
  for (const auto& c : kvcache_grid(caps, size))
    out.push_back({describe(c), [c](Context& ctx, const RunOptions&) { return run_kvcache_case(ctx, c).exact; }});
  return out;
}

std::vector<CheckCase> kvcache_demo_cases(DemoSize size) {
  std::vector<CheckCase> out;
  for (DType cache : {DType::i8, DType::i4}) {
    KvCacheCase c;  // a Llama-3-8B decode step over an int8/int4 paged cache
    c.cache = cache;
    c.layout = KvLayout::paged;
    c.num_heads = 32;
    c.num_kv_heads = 8;
    c.head_dim = 128;
    c.capacity = 64;
    c.length = size == DemoSize::cpu ? 256 : 2048;
    c.max_pages = c.length / c.capacity;
    out.push_back({describe(c), [c](Context& ctx, const RunOptions&) { return run_kvcache_case(ctx, c).exact; }});
  }
  return out;
}

}  // namespace vkattn::check

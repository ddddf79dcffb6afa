#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <numeric>
#include <optional>
#include <span>
#include <random>
#include <vector>

#include "check/bench_run.hpp"
#include "check/text_work.hpp"
#include "check/vision_cases.hpp"
#include "ops/dtype_code.hpp"
#include "reference/kv_quant_reference.hpp"
#include "reference/rounding.hpp"
#include "reference/text_reference.hpp"
#include "reference/tolerance.hpp"
#include "shaders/kv_quant_interface.h"
#include "shaders/text_kv_tier.h"
#include "vkattn/error.hpp"
#include "vkattn/kvcache.hpp"
#include "vkattn/plan.hpp"
#include "vkattn/recorder.hpp"
#include "vkattn/text.hpp"

namespace vkattn::check {

namespace {

// Oracle work (multiply-adds) a case may spend on parity: within it every row
// is checked; past it, blocks are sampled until it is spent (at least one).
constexpr double kOracleBudget = 1.5e8;
// Query rows per sampled block (the first and the last rows of a sequence).
constexpr uint32_t kSampleRows = 4;
// Share of device memory a case may use (the rest: the driver, pipelines, scratch).
constexpr double kMemoryShare = 0.9;

constexpr double kGiB = double(1ull << 30);

uint64_t kv_rows(const TextAttentionParams& p) {
  return p.slot_layout() == KvLayout::paged ? uint64_t(p.num_pages) * p.kv_capacity
                                            : uint64_t(p.batch) * p.kv_capacity;
}

double tensor_bytes(uint64_t elements, DType t) { return double(elements) * dtype_bits(t) / 8; }

// Storage row of position `pos` of sequence b (data contract, docs/data-contract.md;
// a tiered cache's cold tier).
uint64_t storage_row(const TextAttentionParams& p, const std::vector<uint32_t>& table, uint32_t b, uint32_t pos) {
  switch (p.slot_layout()) {
    case KvLayout::contiguous: return uint64_t(b) * p.kv_capacity + pos;
    case KvLayout::ring: return uint64_t(b) * p.kv_capacity + pos % p.kv_capacity;
    case KvLayout::paged:
      return uint64_t(table[uint64_t(b) * p.max_pages + pos / p.kv_capacity]) * p.kv_capacity + pos % p.kv_capacity;
    case KvLayout::tiered:  // not a slot layout
      break;
  }
  return 0;
}

// Output rows [row0, row0 + rows) of sequence b, for the query heads of KV head kvh.
struct Block {
  uint32_t b, kvh, row0, rows;
  auto operator<=>(const Block&) const = default;
};

std::vector<Block> parity_blocks(const TextAttentionParams& p) {
  const uint32_t group = p.num_heads / p.num_kv_heads;
  auto cost = [&](const Block& k) {
    return 2.0 * k.rows * group * p.head_dim * std::max<double>(1.0, std::min<double>(p.kv_len_of(k.b), p.window ? p.window : UINT32_MAX));
  };
  std::vector<Block> all;
  for (uint32_t b = 0; b < p.batch; ++b)
    for (uint32_t h = 0; h < p.num_kv_heads; ++h) all.push_back({b, h, 0, p.seq_len});
  double total = 0.0;
  for (const auto& k : all) total += cost(k);
  if (total <= kOracleBudget) return all;
  // Sample: the last and first sequences and KV heads, the last and first rows.
  const uint32_t rows = std::min(p.seq_len, kSampleRows);
  std::vector<Block> sample;
  double spent = 0.0;
  for (uint32_t b : {p.batch - 1, 0u})
    for (uint32_t h : {0u, p.num_kv_heads - 1})
      for (uint32_t row0 : {p.seq_len - rows, 0u}) {
        const Block k{b, h, row0, rows};
        if (std::find(sample.begin(), sample.end(), k) != sample.end()) continue;
        if (!sample.empty() && spent + cost(k) > kOracleBudget) continue;
        sample.push_back(k);
        spent += cost(k);
      }
  return sample;
}

}  // namespace

void check_text_parity(const TextCase& c, const std::vector<uint32_t>& table, const std::vector<float>& got,
                       reference::Tolerance tol, BenchRecord& r, const QuantizedKv* quantized) {
  const TextAttentionParams& p = c.params;
  const uint32_t group = p.num_heads / p.num_kv_heads, D = p.head_dim;
  // Quantized: the rows' words and scales, dequantized one row at a time.
  const uint32_t lanes = quantized ? 32 / dtype_bits(c.kv) : 1;
  const uint32_t stride = kvquant::packed_stride(lanes, D), groups = kvquant::scale_groups(p.kv_quant_group, D);
  auto dequantized = [&](const std::vector<uint32_t>& words, const std::vector<uint16_t>& scales, uint64_t row) {
    return reference::dequantize_rows(c.kv, p.kv_quant_group, D, std::span(words).subspan(row * stride, stride),
                                      std::span(scales).subspan(row * groups, groups));
  };
  r.tolerance = tol.abs_rel;
  r.total_rows = uint64_t(p.batch) * p.seq_len * p.num_heads;
  for (const Block& k : parity_blocks(p)) {
    TextAttentionParams s = p;
    s.batch = 1;
    s.seq_len = k.rows;
    s.num_heads = group;
    s.num_kv_heads = 1;
    s.layout = KvLayout::contiguous;
    const uint32_t start = p.kv_start_of(k.b), len = p.kv_len_of(k.b);
    s.kv_start = {start};
    s.kv_len = {len};
    s.kv_capacity = start + len;
    s.start_pos = {p.start_pos_of(k.b) + k.row0};
    s.num_pages = s.max_pages = 0;
    std::vector<float> q(uint64_t(k.rows) * group * D), keys(uint64_t(s.kv_capacity) * D), values(keys.size());
    std::vector<float> mine(q.size());
    for (uint32_t row = 0; row < k.rows; ++row)
      for (uint32_t g = 0; g < group; ++g)
        for (uint32_t d = 0; d < D; ++d) {
          const uint64_t full = ((uint64_t(k.b) * p.seq_len + k.row0 + row) * p.num_heads + k.kvh * group + g) * D + d;
          const uint64_t sub = (uint64_t(row) * group + g) * D + d;
          q[sub] = pattern_value(kBenchSeedQ, static_cast<uint32_t>(full));
          mine[sub] = got[full];
        }
    const bool tiered = p.layout == KvLayout::tiered;
    const uint32_t hot_from = tiered ? text::text_tier_hot_from(len, p.hot_window) : len;
    for (uint32_t pos = start; pos < start + len; ++pos) {
      if (pos - start >= hot_from) {  // tiered: a key of the f16 hot ring
        const uint64_t hot =
            ((uint64_t(k.b) * p.hot_window + text::text_tier_hot_slot(pos, p.hot_window)) * p.num_kv_heads + k.kvh) * D;
        for (uint32_t d = 0; d < D; ++d) {
          keys[uint64_t(pos) * D + d] = pattern_value(kBenchSeedHotK, static_cast<uint32_t>(hot + d));
          values[uint64_t(pos) * D + d] = pattern_value(kBenchSeedHotV, static_cast<uint32_t>(hot + d));
        }
        continue;
      }
      const uint64_t row = storage_row(p, table, k.b, pos) * p.num_kv_heads + k.kvh, base = row * D;
      if (quantized) {
        const std::vector<float> kr = dequantized(quantized->k_words, quantized->k_scales, row);
        const std::vector<float> vr = dequantized(quantized->v_words, quantized->v_scales, row);
        std::copy(kr.begin(), kr.end(), keys.begin() + uint64_t(pos) * D);
        std::copy(vr.begin(), vr.end(), values.begin() + uint64_t(pos) * D);
        continue;
      }
      for (uint32_t d = 0; d < D; ++d) {
        keys[uint64_t(pos) * D + d] = pattern_value(kBenchSeedK, static_cast<uint32_t>(base + d));
        values[uint64_t(pos) * D + d] = pattern_value(kBenchSeedV, static_cast<uint32_t>(base + d));
      }
    }
    const auto want = reference::text_attention(s, q, keys, values);
    const auto cmp = reference::compare(mine, want, tol);
    r.rel_err = std::max(r.rel_err, cmp.rel_err);
    r.parity_passed = r.parity_passed && cmp.passed;
    r.checked_rows += uint64_t(k.rows) * group;
  }
  if (!r.parity_passed) {
    r.status = BenchStatus::failed;
    r.reason = fmt::format("parity: max relative error {:.2e} above the tolerance {:.1e}", r.rel_err, tol.abs_rel);
  }
}

void time_bench_call(Context& ctx, const std::function<void(Recorder&, uint32_t)>& record,
                     const BenchRunOptions& options, BenchRecord& r) {
  Recorder first(ctx);
  record(first, 0);
  if (options.pipeline_stats) r.pipelines = bound_pipelines(first);
  const auto start = std::chrono::steady_clock::now();
  first.run();
  const double first_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!ctx.caps().timestamps) {
    r.status = BenchStatus::skipped;
    r.reason = "the device has no compute timestamps";
  } else if (first_ms > options.max_run_ms) {
    r.status = BenchStatus::skipped;
    r.reason = fmt::format("one run took {:.0f} ms, above --max-run-ms {:.0f}", first_ms, options.max_run_ms);
  } else {
    r.timing = time_back_to_back(ctx, record, options.runs);
  }
}

namespace {

std::vector<uint32_t> page_table(const TextCase& c) {
  const auto& p = c.params;
  std::vector<uint32_t> pages(p.num_pages);
  std::iota(pages.begin(), pages.end(), 0u);
  std::mt19937 rng(c.seed);
  if (c.scramble_pages) std::shuffle(pages.begin(), pages.end(), rng);
  std::vector<uint32_t> table(uint64_t(p.batch) * p.max_pages);
  for (size_t i = 0; i < table.size(); ++i) table[i] = pages[i % pages.size()];
  return table;
}

Shape kv_storage_shape(const TextAttentionParams& p) {
  return p.slot_layout() == KvLayout::paged ? Shape{p.num_pages, p.kv_capacity, p.num_kv_heads, p.head_dim}
                                            : Shape{p.batch, p.kv_capacity, p.num_kv_heads, p.head_dim};
}

// Quantized K/V (i8/i4) cannot take the pattern directly: it is written in f16
// to staging rows of the cache's storage shape and quantized into every set's
// K and V by kv_append (the storage rows seen as one contiguous cache), so the
// kernel reads the dequantized pattern and parity reads back what it reads.
void fill_quantized_sets(Context& ctx, const TextCase& c, std::vector<TextAttentionTensors>& sets) {
  const Shape shape = kv_storage_shape(c.params);
  const Tensor staging_k = ctx.tensor(DType::f16, shape), staging_v = ctx.tensor(DType::f16, shape);
  Recorder fill(ctx);
  record_fill(fill, staging_k, kBenchSeedK);
  record_fill(fill, staging_v, kBenchSeedV);
  KvAppendParams ap;
  ap.batch = uint32_t(shape[0]);
  ap.tokens = ap.kv_capacity = uint32_t(shape[1]);
  ap.num_kv_heads = c.params.num_kv_heads;
  ap.head_dim = c.params.head_dim;
  ap.quant_group = c.params.kv_quant_group;
  for (const auto& set : sets) {
    record_fill(fill, set.q, kBenchSeedQ);
    KvAppendTensors at;
    at.k = staging_k;
    at.v = staging_v;
    at.cache_k = set.k;
    at.cache_v = set.v;
    at.k_scale = set.k_scale;
    at.v_scale = set.v_scale;
    kv_append(fill, ap, at);
  }
  fill.run();
}

template <class T>
std::vector<T> download_all(Context& ctx, const Tensor& t) {
  std::vector<T> out(t.bytes() / sizeof(T));
  ctx.download(t, std::as_writable_bytes(std::span(out)));
  return out;
}

}  // namespace

std::string text_skip_reason(const DeviceCaps& caps, const TextCase& c) {
  const auto& p = c.params;
  const double kv = tensor_bytes(kv_rows(p) * p.num_kv_heads * p.head_dim, c.kv);
  const uint64_t q_elems = uint64_t(p.batch) * p.seq_len * p.num_heads * p.head_dim;
  const double q = tensor_bytes(q_elems, c.q), out = tensor_bytes(q_elems, c.out);
  const bool range_binds = caps.max_storage_buffer_range <= caps.max_allocation_bytes;
  const double limit = double(std::min(caps.max_storage_buffer_range, caps.max_allocation_bytes));
  const char* limit_name = range_binds ? "max_storage_buffer_range" : "max_allocation_bytes";
  // K/V past one binding are read by device address where the device has
  // that; they still take one allocation each.
  const bool kv_by_address = caps.buffer_device_address;
  const double kv_limit = kv_by_address ? double(caps.max_allocation_bytes) : limit;
  if (kv > kv_limit)
    return fmt::format("K (and V) is {:.2f} GiB, above the device's {} ({:.2f} GiB)", kv / kGiB,
                       kv_by_address ? "max_allocation_bytes" : limit_name, kv_limit / kGiB);
  // Quantized K/V are filled through f16 staging copies and carry f16 scales.
  const bool quantized = is_quantized(c.kv);
  const double staging = quantized ? tensor_bytes(kv_rows(p) * p.num_kv_heads * p.head_dim, DType::f16) : 0.0;
  const double scales =
      quantized ? 2.0 * kv_rows(p) * p.num_kv_heads * kvquant::scale_groups(p.kv_quant_group, p.head_dim) : 0.0;
  if (staging > limit)
    return fmt::format("the f16 staging copy of K that fills the {} cache is {:.2f} GiB, above the device's {} ({:.2f} "
                       "GiB)",
                       to_string(c.kv), staging / kGiB, limit_name, limit / kGiB);
  if (std::max(q, out) > limit)
    return fmt::format("Q or O is {:.2f} GiB, above the device's {} ({:.2f} GiB)", std::max(q, out) / kGiB,
                       limit_name, limit / kGiB);
  const double total = 2 * (kv + staging + scales) + q + out + 4.0 * p.batch * p.max_pages;
  if (caps.device_local_bytes && total > kMemoryShare * double(caps.device_local_bytes))
    return fmt::format("needs {:.2f} GiB of device memory, above {:.0f}% of the device's device_local_bytes ({:.2f} GiB)",
                       total / kGiB, 100 * kMemoryShare, double(caps.device_local_bytes) / kGiB);
  return "";
}

BenchRecord run_text_bench(Context& ctx, const TextCase& c, const BenchRunOptions& options) {
  BenchRecord r;
  const TextAttentionParams& p = c.params;
  const TextWork work = text_work(p, c.q, c.kv, c.out);
  r.bytes = work.bytes;
  r.flops = work.flops;
  r.reason = text_skip_reason(ctx.caps(), c);
  if (!r.reason.empty()) {
    r.status = BenchStatus::skipped;
    return r;
  }
  const Shape q_shape{p.batch, p.seq_len, p.num_heads, p.head_dim};
  const Shape kv_shape = kv_storage_shape(p);
  const bool quantized = is_quantized(c.kv);
  Shape scale_shape(kv_shape.begin(), kv_shape.end() - 1);  // f16 per (slot, KV head), x groups with a group size
  if (p.kv_quant_group) scale_shape.push_back(kvquant::scale_groups(p.kv_quant_group, p.head_dim));
  auto new_set = [&] {
    TextAttentionTensors s;
    s.q = ctx.tensor(c.q, q_shape);
    s.k = ctx.tensor(c.kv, kv_shape);
    s.v = ctx.tensor(c.kv, kv_shape);
    s.out = ctx.tensor(c.out, q_shape);
    if (quantized) {
      s.k_scale = ctx.tensor(DType::f16, scale_shape);
      s.v_scale = ctx.tensor(DType::f16, scale_shape);
    }
    if (p.layout == KvLayout::tiered) {
      s.hot_k = ctx.tensor(DType::f16, {p.batch, p.hot_window, p.num_kv_heads, p.head_dim});
      s.hot_v = ctx.tensor(DType::f16, {p.batch, p.hot_window, p.num_kv_heads, p.head_dim});
    }
    return s;
  };
  TextAttentionTensors t = new_set();
  std::vector<uint32_t> table;
  if (p.slot_layout() == KvLayout::paged) {
    table = page_table(c);
    t.page_table = ctx.tensor(DType::u32, {p.batch, p.max_pages});
    ctx.upload(t.page_table, table);
  }
  // Input sets to rotate among while timing (check/timing.hpp), all filled
  // alike; set 0's output is checked.
  std::vector<TextAttentionTensors> sets{t};
  for (uint32_t i = 1; i < rotation_sets(t.k.bytes() + t.v.bytes()); ++i) {
    TextAttentionTensors copy = new_set();
    copy.page_table = t.page_table;
    sets.push_back(copy);
  }
  r.input_sets = uint32_t(sets.size());
  if (quantized) {
    fill_quantized_sets(ctx, c, sets);
  } else {
    Recorder fill(ctx);
    for (const auto& set : sets) record_fill_inputs(fill, set.q, set.k, set.v);
    fill.run();
  }
  if (p.layout == KvLayout::tiered) {  // the hot ring: a pattern of its own, so parity sees which tier a key came from
    Recorder fill(ctx);
    for (const auto& set : sets) {
      record_fill(fill, set.hot_k, kBenchSeedHotK);
      record_fill(fill, set.hot_v, kBenchSeedHotV);
    }
    fill.run();
  }
  // A recording made at a shorter length: host hints of recorded_at keys, the
  // real per-sequence lengths and positions read from GPU buffers.
  TextAttentionParams recorded = p;
  if (c.recorded_at) {
    std::vector<uint32_t> lens(p.batch), starts(p.batch);
    for (uint32_t b = 0; b < p.batch; ++b) {
      lens[b] = p.kv_len_of(b);
      starts[b] = p.start_pos_of(b);
    }
    recorded.kv_len = {c.recorded_at};
    recorded.start_pos = {p.kv_start_of(0) + c.recorded_at - p.seq_len};
    for (auto& set : sets) {
      set.kv_len = ctx.tensor(DType::u32, {p.batch});
      set.start_pos = ctx.tensor(DType::u32, {p.batch});
      ctx.upload(set.kv_len, lens);
      ctx.upload(set.start_pos, starts);
    }
  }
  TextCase overridden = c;
  overridden.variant = options.variant;
  overridden.splits = options.splits;
  overridden.tile_keys = options.tile_keys;
  overridden.rows = options.rows;
  const PlanOptions plan = plan_options(overridden);
  time_bench_call(ctx, [&](Recorder& rec, uint32_t i) {
    r.variant = text_attention(rec, recorded, sets[i % sets.size()], plan).variant;
  }, options, r);
  std::vector<std::byte> out_bytes(t.out.bytes());
  ctx.download(t.out, out_bytes);
  // Quantized: the exact path, the oracle over the dequantized values (exact in f32).
  std::optional<QuantizedKv> values;
  if (quantized)
    values = QuantizedKv{download_all<uint32_t>(ctx, t.k), download_all<uint32_t>(ctx, t.v),
                         download_all<uint16_t>(ctx, t.k_scale), download_all<uint16_t>(ctx, t.v_scale)};
  check_text_parity(c, table, host::from_storage(c.out, out_bytes, t.out.elements()),
                    reference::tolerance_for(c.q, quantized ? c.q : c.kv, c.out), r, values ? &*values : nullptr);
  return r;
}

}  // namespace vkattn::check

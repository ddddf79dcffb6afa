#include "check/text_cases.hpp"
#include "check/host_tensor.hpp"
#include "check/text_work.hpp"
#include "check/timing.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "planner/text_planner.hpp"
#include "planner/text_variants.hpp"
#include "reference/text_reference.hpp"
#include "vkattn/error.hpp"
#include "vkattn/plan.hpp"
#include "vkattn/recorder.hpp"

namespace vkattn::check {

std::string describe(const TextCase& c) {
  const auto& p = c.params;
  std::string s = fmt::format("B{} S{} H{}/{} D{} L{} {} q={} kv={} o={}", p.batch, p.seq_len, p.num_heads,
                              p.num_kv_heads, p.head_dim, fmt::join(p.kv_len, ","), to_string(p.layout),
                              to_string(c.q), to_string(c.kv), to_string(c.out));
  if (p.causal) s += " causal";
  if (p.start_pos.size() > 1 || p.start_pos[0]) s += fmt::format(" start={}", fmt::join(p.start_pos, ","));
  if (p.window) s += fmt::format(" window={}", p.window);
  if (p.softcap > 0) s += fmt::format(" softcap={}", p.softcap);
  if (p.layout == KvLayout::tiered) s += fmt::format(" hot={} cold={}", p.hot_window, to_string(p.cold_layout));
  if (c.gpu_kv_len) s += " gpu-lens";
  if (c.indirect) s += " indirect";
  return s;
}

PlanOptions plan_options(const TextCase& c) {
  PlanOptions options;
  options.variant = c.variant;
  options.strict = !c.variant.empty();
  options.splits = c.splits;
  options.tile_keys = c.tile_keys;
  options.rows = c.rows;
  return options;
}

namespace {

// Gaussian K (is_v false) or V values, scaled as the case says
// (kv_log2_scale, v_log2_spread).
std::vector<float> kv_values(std::mt19937& rng, uint64_t count, uint32_t head_dim, const TextCase& c, bool is_v) {
  std::vector<float> values = host::gaussian(rng, count, 1.0f);
  const float log2_spread = is_v ? c.v_log2_spread : 0.0f;
  if (c.kv_log2_scale == 0.0f && log2_spread == 0.0f) return values;
  std::uniform_real_distribution<float> spread(-log2_spread, log2_spread);
  for (uint64_t row = 0; row < count / head_dim; ++row) {
    const float factor = std::exp2(c.kv_log2_scale + (log2_spread > 0.0f ? spread(rng) : 0.0f));
    for (uint32_t i = 0; i < head_dim; ++i) values[row * head_dim + i] *= factor;
  }
  return values;
}

}  // namespace

CheckResult run_text_case(Context& ctx, const TextCase& c, const RunOptions& options) {
  CheckResult r;
  const int timed_runs = options.timed_runs;
  const bool skip_oracle = options.skip_oracle;
  r.name = c.name.empty() ? describe(c) : c.name;
  r.tol = reference::tolerance_for(c.q, c.kv, c.out);
  try {
    const TextAttentionParams& p = c.params;
    std::mt19937 rng(c.seed);
    const bool paged = p.slot_layout() == KvLayout::paged;
    const bool tiered = p.layout == KvLayout::tiered;
    const uint64_t q_elems = uint64_t(p.batch) * p.seq_len * p.num_heads * p.head_dim;
    const uint64_t kv_rows = paged ? uint64_t(p.num_pages) * p.kv_capacity : uint64_t(p.batch) * p.kv_capacity;
    const uint64_t kv_elems = kv_rows * p.num_kv_heads * p.head_dim;
    const Shape q_shape{p.batch, p.seq_len, p.num_heads, p.head_dim};
    const Shape kv_shape = paged ? Shape{p.num_pages, p.kv_capacity, p.num_kv_heads, p.head_dim}
                                 : Shape{p.batch, p.kv_capacity, p.num_kv_heads, p.head_dim};
    host::Values q = host::to_storage(c.q, host::gaussian(rng, q_elems, c.logit_scale));
    host::Values k = host::to_storage(c.kv, kv_values(rng, kv_elems, p.head_dim, c, false));
    host::Values v = host::to_storage(c.kv, kv_values(rng, kv_elems, p.head_dim, c, true));
    // The hot ring holds values unlike the cold tier's, so a key read from the
    // wrong tier shows in the output.
    const Shape hot_shape{p.batch, p.hot_window, p.num_kv_heads, p.head_dim};
    const uint64_t hot_elems = tiered ? element_count(hot_shape) : 0;
    host::Values hot_k = host::to_storage(DType::f16, host::gaussian(rng, hot_elems, 1.5f));
    host::Values hot_v = host::to_storage(DType::f16, host::gaussian(rng, hot_elems, 1.5f));

    std::vector<uint32_t> table;
    if (paged) {
      std::vector<uint32_t> pages(p.num_pages);
      std::iota(pages.begin(), pages.end(), 0u);
      if (c.scramble_pages) std::shuffle(pages.begin(), pages.end(), rng);
      table.resize(uint64_t(p.batch) * p.max_pages);
      for (size_t i = 0; i < table.size(); ++i) table[i] = pages[i % pages.size()];
      check_page_table(p, table);
    }

    TextAttentionTensors t;
    t.q = host::upload(ctx, c.q, q_shape, q.bytes);
    t.k = host::upload(ctx, c.kv, kv_shape, k.bytes);
    t.v = host::upload(ctx, c.kv, kv_shape, v.bytes);
    t.out = ctx.tensor(c.out, q_shape);
    if (tiered) {
      t.hot_k = host::upload(ctx, DType::f16, hot_shape, hot_k.bytes);
      t.hot_v = host::upload(ctx, DType::f16, hot_shape, hot_v.bytes);
    }
    if (paged) t.page_table = host::upload_u32(ctx, table).reshaped({p.batch, p.max_pages});
    if (c.gpu_kv_len) t.kv_len = host::upload_u32(ctx, host::per_batch(p.kv_len, p.batch));
    if (c.gpu_start_pos) t.start_pos = host::upload_u32(ctx, host::per_batch(p.start_pos, p.batch));
    if (c.gpu_kv_start) t.kv_start = host::upload_u32(ctx, host::per_batch(p.kv_start, p.batch));

    const PlanOptions options = plan_options(c);
    Recorder rec(ctx);
    if (c.indirect) {
      // Plan once to learn the grid, then record the call with counts from the GPU.
      Recorder probe(ctx);
      TextCallInfo shape_info = text_attention(probe, p, t, options);
      t.indirect = host::upload_u32(ctx, {shape_info.workgroups[0], shape_info.workgroups[1], shape_info.workgroups[2]});
    }
    TextCallInfo info = text_attention(rec, p, t, options);
    r.variant = info.variant;
    r.reason = info.reason;
    rec.run();
    std::vector<std::byte> out_bytes(t.out.bytes());
    ctx.download(t.out, out_bytes);
    std::vector<float> got = host::from_storage(c.out, out_bytes, q_elems);

    if (timed_runs > 0 && ctx.caps().timestamps) {
      // Copies of the inputs to rotate among, so repeats do not hit the cache.
      std::vector<TextAttentionTensors> sets{t};
      for (uint32_t i = 1; i < rotation_sets(t.k.bytes() + t.v.bytes()); ++i) {
        TextAttentionTensors copy = t;
        copy.q = host::upload(ctx, c.q, q_shape, q.bytes);
        copy.k = host::upload(ctx, c.kv, kv_shape, k.bytes);
        copy.v = host::upload(ctx, c.kv, kv_shape, v.bytes);
        copy.out = ctx.tensor(c.out, q_shape);
        sets.push_back(copy);
      }
      const ReplayTiming timing = time_back_to_back(
          ctx, [&](Recorder& into, uint32_t i) { text_attention(into, p, sets[i % sets.size()], options); },
          timed_runs);
      r.gpu_ms = timing.median_ms;
      r.gpu_min_ms = timing.min_ms;
      r.gpu_max_ms = timing.max_ms;
    }

    const TextWork work = text_work(p, c.q, c.kv, c.out);
    r.bytes_moved = work.bytes;
    r.flops = work.flops;

    if (!skip_oracle) {
      std::vector<double> want =
          reference::text_attention(p, q.values, k.values, v.values, table, hot_k.values, hot_v.values);
      r.cmp = reference::compare(got, want, r.tol);
      r.passed = r.cmp.passed;
    } else {
      r.passed = true;
    }
  } catch (const std::exception& e) {
    r.error = e.what();
    r.passed = false;
  }
  return r;
}

namespace {

TextCase make_text_case(uint32_t b, uint32_t s, uint32_t h, uint32_t hkv, uint32_t d, uint32_t kv_len) {
  TextCase c;
  c.params.batch = b;
  c.params.seq_len = s;
  c.params.num_heads = h;
  c.params.num_kv_heads = hkv;
  c.params.head_dim = d;
  c.params.kv_len = {kv_len};
  c.params.kv_capacity = kv_len;
  return c;
}

}  // namespace

void set_layout(TextCase& c, KvLayout layout) {
  auto& p = c.params;
  p.layout = layout;
  if (layout == KvLayout::tiered) layout = p.cold_layout;
  uint32_t max_end = 0;
  for (uint32_t b = 0; b < p.batch; ++b) max_end = std::max(max_end, p.kv_start_of(b) + p.kv_len_of(b));
  uint32_t max_len = *std::max_element(p.kv_len.begin(), p.kv_len.end());
  if (layout == KvLayout::contiguous) p.kv_capacity = std::max(1u, max_end);
  if (layout == KvLayout::ring) p.kv_capacity = std::max(1u, max_len + 3);  // positions wrap around the ring
  if (layout == KvLayout::paged) {
    p.kv_capacity = 16;  // page size
    p.max_pages = (max_end + 15) / 16 + 1;
    p.num_pages = p.batch * p.max_pages + 2;
  }
}

void set_tiered(TextCase& c, KvLayout cold, uint32_t hot_window) {
  c.params.cold_layout = cold;
  c.params.hot_window = hot_window;
  set_layout(c, KvLayout::tiered);
}

namespace {

// A causal batch on a paged cache whose per-sequence values and workgroup
// counts all come from GPU buffers.
TextCase from_gpu_buffers(TextCase c) {
  c.params.causal = true;
  c.gpu_kv_len = c.gpu_start_pos = c.gpu_kv_start = true;
  c.indirect = true;
  set_layout(c, KvLayout::paged);
  return c;
}

}  // namespace

std::vector<TextCase> text_check_grid(const DeviceCaps& caps, GridSize size) {
  std::vector<TextCase> grid;
  const bool full = size == GridSize::full;
  uint32_t seed = 1;
  auto add = [&](TextCase c) {
    c.seed = seed++;
    c.out = c.q;
    grid.push_back(std::move(c));
  };

  struct Combo {
    DType q, kv;
  };
  const Combo combos[] = {{DType::f32, DType::f32}, {DType::f32, DType::f16}, {DType::f16, DType::f16},
                          {DType::f32, DType::bf16}, {DType::bf16, DType::bf16}};
  const KvLayout layouts[] = {KvLayout::contiguous, KvLayout::ring, KvLayout::paged};

  // 1. Every variant x dtype x layout, forced, on a shape that exercises GQA,
  //    masking and a partial last tile. Tiered caches (16-bit cold tiers)
  //    alternate a contiguous and a paged cold tier across the variants.
  size_t tiered_count = 0;
  for (const auto& v : planner::text_variants()) {
    // Quantized K/V rows are the kvcache family's (kvcache_cases.cpp): their
    // caches are written by kv_append and judged twice.
    if (is_quantized(v.kv)) continue;
    for (KvLayout layout : {KvLayout::contiguous, KvLayout::ring, KvLayout::paged, KvLayout::tiered}) {
      if (layout == KvLayout::tiered && v.kv == DType::f32) continue;  // the tiers share 16-bit rows
      const bool decode = v.phase == Phase::decode;
      const uint32_t d = std::max(64u, v.min_head_dim);
      TextCase c = decode ? make_text_case(2, 1, 8, 2, d, 77) : make_text_case(1, 19, 4, 2, d, 40);
      c.params.causal = !decode;
      c.params.start_pos = {decode ? 76u : 21u};
      c.params.kv_len = {decode ? 77u : 40u};
      if (decode) c.params.kv_len = {77, 50}, c.params.start_pos = {76, 49};
      c.q = v.q;
      c.kv = v.kv;
      c.variant = v.name;
      c.logit_scale = 2.0f;
      if (v.kind == planner::Kind::split) c.splits = 3;  // several splits even on this short KV
      if (layout == KvLayout::tiered) {
        // 20 (13) hot keys: the splits and tiles cross the tier boundary.
        set_tiered(c, tiered_count++ % 2 ? KvLayout::paged : KvLayout::contiguous, decode ? 20 : 13);
      } else {
        set_layout(c, layout);
      }
      if (!planner::text_geometry(v, caps, planner::text_shape_of(c.params, c.q, c.kv)).geometry)
        continue;  // the device cannot run it
      c.name = fmt::format("{} {}", v.name, to_string(layout));
      if (layout == KvLayout::tiered) c.name += fmt::format(" cold {}", to_string(c.params.cold_layout));
      add(c);
    }
  }

  // 2. Features across head dims and GQA ratios, planner's choice, every dtype pair.
  const uint32_t dims[] = {64, 80, 96, 128, 256};
  const uint32_t ratios[] = {1, 4, 8};
  for (uint32_t d : dims) {
    for (uint32_t ratio : ratios) {
      for (int phase = 0; phase < 2; ++phase) {
        const Combo& combo = combos[(d / 64 + ratio + phase) % 5];
        TextCase c = phase == 0 ? make_text_case(2, 1, 2 * ratio, 2, d, 96) : make_text_case(1, 24, ratio, 1, d, 64);
        c.q = combo.q;
        c.kv = combo.kv;
        c.params.causal = phase == 1;
        c.params.start_pos = {phase == 0 ? 95u : 40u};
        set_layout(c, layouts[(d + ratio) % 3]);
        add(c);
      }
    }
  }

  // 3. Masking and scoring features.
  {
    TextCase c = make_text_case(1, 16, 4, 4, 64, 48);
    c.params.causal = true;
    c.params.start_pos = {32};
    c.params.window = 7;
    c.params.softcap = 30.0f;
    c.logit_scale = 6.0f;  // large logits: softcap matters
    set_layout(c, KvLayout::contiguous);
    add(c);
    c.params.window = 0;
    c.params.scale = 0.3f;
    set_layout(c, KvLayout::paged);
    add(c);
  }
  {
    // Fully masked rows: queries before every key (kv_start past the query).
    TextCase c = make_text_case(1, 8, 2, 1, 64, 20);
    c.params.causal = true;
    c.params.start_pos = {0};
    c.params.kv_start = {4};
    set_layout(c, KvLayout::contiguous);
    add(c);
  }
  {
    // kv_len 1, and a zero-length sequence in a batch.
    TextCase c = make_text_case(3, 1, 4, 2, 64, 1);
    c.params.kv_len = {1, 0, 33};
    c.params.start_pos = {0, 0, 32};
    set_layout(c, KvLayout::contiguous);
    add(c);
  }
  {
    // Sliding window on a ring cache, positions past the ring size.
    TextCase c = make_text_case(2, 1, 8, 2, 128, 32);
    c.params.kv_len = {32, 20};
    c.params.kv_start = {100, 13};
    c.params.start_pos = {131, 32};
    c.params.window = 32;
    c.params.causal = true;
    set_layout(c, KvLayout::ring);
    c.params.kv_capacity = 32;
    add(c);
  }
  {
    // Per-sequence values from GPU buffers, batched, paged, with indirect dispatch.
    TextCase c = make_text_case(3, 5, 8, 2, 64, 40);
    c.params.kv_len = {40, 17, 29};
    c.params.start_pos = {35, 12, 24};
    add(from_gpu_buffers(c));
  }
  {
    // Decode with per-sequence values from GPU buffers, paged, indirect dispatch.
    TextCase c = make_text_case(3, 1, 8, 2, 128, 300);
    c.params.kv_len = {300, 17, 129};
    c.params.start_pos = {299, 16, 128};
    add(from_gpu_buffers(c));
  }
  {
    // A long context through split-KV decode (no length caps).
    TextCase c = make_text_case(1, 1, 4, 1, 64, full ? 65536 : 20000);
    c.params.start_pos = {c.params.kv_len[0] - 1};
    c.q = DType::f32;
    c.kv = DType::f16;
    set_layout(c, KvLayout::contiguous);
    add(c);
  }
  // 4. The flash_fragments engine (tensor cores, and their emulation that runs
  //    anywhere), forced: head dims, GQA ratios, layouts, several key tiles with
  //    a partial last one, masks, scoring, batches, GPU-side values, indirect.
  //    The cases alternate f16 and f32 Q (which differ only in the Q load).
  std::vector<std::pair<TextCase, std::string>> flash;
  const uint32_t ratios_flash[] = {1, 4, 8};
  for (size_t i = 0; i < std::size(dims); ++i) {
    const uint32_t ratio = ratios_flash[i % 3];
    TextCase c = make_text_case(1, full ? 300 : 37, 2 * ratio, 2, dims[i], full ? 700 : 70);
    c.params.causal = true;
    c.params.start_pos = {full ? 400u : 33u};
    c.logit_scale = 2.0f;
    set_layout(c, layouts[i % 3]);
    flash.push_back({c, fmt::format("D{} gqa{} causal {}", dims[i], ratio, to_string(layouts[i % 3]))});
  }
  {
    TextCase c = make_text_case(1, 33, 4, 2, 64, 80);
    c.params.causal = true;
    c.params.start_pos = {47};
    c.params.window = 21;
    c.params.softcap = 30.0f;
    c.params.scale = 0.2f;
    c.logit_scale = 6.0f;
    set_layout(c, KvLayout::paged);
    flash.push_back({c, "window softcap scale paged"});
    c.params.causal = false;
    c.params.window = 0;
    c.params.softcap = 0.0f;
    set_layout(c, KvLayout::ring);
    flash.push_back({c, "bidirectional ring"});
  }
  {
    TextCase c = make_text_case(3, 21, 8, 2, 128, 60);
    c.params.kv_len = {60, 25, 0};
    c.params.kv_start = {3, 0, 0};
    c.params.start_pos = {42, 4, 0};
    flash.push_back({from_gpu_buffers(c), "batch gpu-lens indirect paged"});
  }
  {
    // Rows that see no key: queries before every key.
    TextCase c = make_text_case(1, 20, 2, 1, 96, 40);
    c.params.causal = true;
    c.params.start_pos = {0};
    c.params.kv_start = {10};
    set_layout(c, KvLayout::contiguous);
    flash.push_back({c, "masked rows"});
  }
  // One causal sequence on a contiguous cache, its queries from `start`.
  auto causal_contiguous = [](uint32_t s, uint32_t h, uint32_t hkv, uint32_t d, uint32_t kv_len, uint32_t start) {
    TextCase c = make_text_case(1, s, h, hkv, d, kv_len);
    c.params.causal = true;
    c.params.start_pos = {start};
    set_layout(c, KvLayout::contiguous);
    return c;
  };
  {
    // 16-key tiles: two K/V buffers in turn (the planner's own tiles take
    // one buffer on devices whose shared memory does not hold two).
    TextCase c = causal_contiguous(60, 8, 2, 128, 100, 40);
    c.tile_keys = 16;
    flash.push_back({c, "two K/V buffers"});
  }
  {
    // A negative scale: the engine scales the scores before their maximum.
    TextCase c = causal_contiguous(24, 4, 2, 64, 50, 26);
    c.params.scale = -0.25f;
    flash.push_back({c, "negative scale"});
  }
  {
    // Scores spread widely (Q 12 times larger): a row's maximum keeps rising,
    // tile after tile, by more than the engine's rescale slack.
    TextCase c = causal_contiguous(full ? 200 : 40, 8, 2, 64, full ? 900 : 300, full ? 700 : 260);
    c.logit_scale = 12.0f;
    flash.push_back({c, "rising maxima"});
  }
  // A head dim that is not a multiple of 16: the fragments pad it with zero lanes.
  flash.push_back({causal_contiguous(29, 4, 2, 72, 45, 16), "D72 padded"});
  // Each case on both builds of a flash_fragments family, its two dtype rows
  // (f16 and f32 Q by default) in turn; a row the device cannot run is left out.
  auto add_on_fragments = [&](std::initializer_list<const char*> families,
                              const std::vector<std::pair<TextCase, std::string>>& flash,
                              std::pair<const char*, const char*> dtype_rows = {"_f16", "_f16kv"}) {
    for (const char* family : families) {
      for (size_t i = 0; i < flash.size(); ++i) {
        TextCase c = flash[i].first;
        const planner::TextVariant* v =
            planner::find_text_variant(std::string(family) + (i % 2 ? dtype_rows.second : dtype_rows.first));
        c.q = v->q;
        c.kv = v->kv;
        c.variant = v->name;
        if (!planner::text_geometry(*v, caps, planner::text_shape_of(c.params, c.q, c.kv)).geometry)
          continue;  // the device cannot run it
        c.name = fmt::format("{} {}", v->name, flash[i].second);
        add(c);
      }
    }
  };
  add_on_fragments({"prefill_flash_coopmat", "prefill_flash_emulated"}, flash);
  // The workgroup-matrix engine reads contiguous K/V only: the same cases
  // with their caches made contiguous.
  std::vector<std::pair<TextCase, std::string>> flash_contiguous;
  for (auto [c, what] : flash) {
    if (c.params.layout != KvLayout::contiguous) {
      set_layout(c, KvLayout::contiguous);
      what += " (made contiguous)";
    }
    flash_contiguous.push_back({c, what});
  }
  add_on_fragments({"prefill_flash_coopmat2", "prefill_flash_wg_emulated"}, flash_contiguous);
  // bf16 (and f32 Q with bf16 K/V) is staged as f16 times powers of two. Its
  // rows take the same cases, then K/V that f16 could not hold (times
  // 2^log2_scale, with Q times 2^-log2_scale so the scores stay moderate),
  // and V rows each 2^-12 to 2^12 times another (tiles of small values staged
  // at the power of an earlier tile of large ones, and the other way round).
  auto beyond_f16 = [](TextCase c, float log2_scale, const char* what) {
    c.kv_log2_scale = log2_scale;
    c.logit_scale = std::exp2(-log2_scale);
    return std::pair{c, fmt::format("K/V {} f16's range", what)};
  };
  auto v_spread = [](TextCase c) {
    c.v_log2_spread = 12.0f;
    set_layout(c, KvLayout::paged);
    return std::pair{c, std::string("V rows spread over 24 octaves, D256 paged")};
  };
  add_on_fragments({"prefill_flash_coopmat", "prefill_flash_emulated"}, flash, {"_bf16", "_bf16kv"});
  const TextCase bf16_prompt = causal_contiguous(full ? 300 : 40, 4, 2, 128, full ? 1000 : 150, full ? 700 : 110);
  add_on_fragments({"prefill_flash_coopmat", "prefill_flash_emulated"},
                   {beyond_f16(bf16_prompt, 112.0f, "near bf16's top, above"),
                    beyond_f16(bf16_prompt, -30.0f, "below"),
                    v_spread(causal_contiguous(full ? 200 : 30, 4, 1, 256, full ? 900 : 200, full ? 700 : 170))},
                   {"_bf16", "_bf16kv"});

  // 5. Decode on the flash_fragments engine (split partials), forced: GQA, MQA
  //    and MHA rows in one warp, every layout, window and softcap, several
  //    splits, lengths from GPU buffers (splits sized from the capacity).
  std::vector<std::pair<TextCase, std::string>> flash_decode;
  {
    TextCase c = make_text_case(2, 1, 8, 2, 64, full ? 9000 : 700);
    c.params.kv_len = {c.params.kv_len[0], 333};
    c.params.start_pos = {c.params.kv_len[0] - 1, 332};
    set_layout(c, KvLayout::contiguous);
    flash_decode.push_back({c, "gqa4 batch contiguous"});
  }
  {
    TextCase c = make_text_case(1, 1, 8, 1, 128, 500);
    c.params.start_pos = {520};
    c.params.kv_start = {21};
    c.params.window = 300;
    c.params.causal = true;
    c.params.softcap = 20.0f;
    c.logit_scale = 4.0f;
    set_layout(c, KvLayout::ring);
    flash_decode.push_back({c, "mqa8 window softcap ring"});
  }
  for (uint32_t d : {80u, 96u}) {
    TextCase c = make_text_case(2, 1, 4, 4, d, 260);
    c.params.start_pos = {259};
    set_layout(c, KvLayout::paged);
    flash_decode.push_back({c, fmt::format("mha D{} paged", d)});
  }
  {
    TextCase c = make_text_case(3, 1, 32, 8, 128, full ? 4096 : 400);
    const uint32_t L = c.params.kv_len[0];
    c.params.kv_len = {L, 17, 0};
    c.params.start_pos = {L - 1, 16, 0};
    flash_decode.push_back({from_gpu_buffers(c), "gqa4 batch gpu-lens indirect paged"});
  }
  for (uint32_t d : {160u, 256u}) {
    // Past 128 columns two warps of decode_stream share each tile, each with
    // half of the head dim (the flash_coopmat rows take neither head dim).
    TextCase c = make_text_case(2, 1, 8, 2, d, full ? 3000 : 300);
    c.params.kv_len = {c.params.kv_len[0], 77};
    c.params.start_pos = {c.params.kv_len[0] - 1, 76};
    set_layout(c, d == 160 ? KvLayout::ring : KvLayout::paged);
    flash_decode.push_back({c, fmt::format("gqa4 D{} batch {}", d, d == 160 ? "ring" : "paged")});
  }
  {
    // Many splits for one row group: the last split's merge spreads them over
    // the workgroup's invocations (text_split_combine.glsl).
    TextCase c = make_text_case(1, 1, 8, 1, 64, full ? 6000 : 1500);
    c.params.start_pos = {c.params.kv_len[0] - 1};
    c.splits = 40;
    set_layout(c, KvLayout::contiguous);
    flash_decode.push_back({c, "mqa8 40 splits"});
    // Four query heads: 64 columns at D64, so three invocations share each
    // of decode_stream's 33 splits (a lane count that divides nothing).
    TextCase g = make_text_case(1, 1, 4, 1, 64, full ? 6000 : 1500);
    g.params.start_pos = {g.params.kv_len[0] - 1};
    g.splits = 33;
    set_layout(g, KvLayout::contiguous);
    flash_decode.push_back({g, "gqa4 33 splits"});
  }
  add_on_fragments({"decode_flash_coopmat", "decode_flash_emulated"}, flash_decode);
  add_on_fragments({"decode_flash_coopmat", "decode_flash_emulated"}, flash_decode, {"_bf16", "_bf16kv"});
  add_on_fragments({"decode_stream_coopmat", "decode_stream_emulated"}, flash_decode);
  // bf16 K/V on the stream engine: the same cases, then the bf16 prefill's kinds of values.
  add_on_fragments({"decode_stream_coopmat", "decode_stream_emulated"}, flash_decode, {"_bf16", "_bf16kv"});
  TextCase bf16_step = make_text_case(2, 1, 8, 2, 128, full ? 2000 : 200);
  bf16_step.params.start_pos = {bf16_step.params.kv_len[0] - 1};
  set_layout(bf16_step, KvLayout::contiguous);
  TextCase bf16_mqa_step = make_text_case(1, 1, 8, 1, 256, full ? 3000 : 300);
  bf16_mqa_step.params.start_pos = {bf16_mqa_step.params.kv_len[0] - 1};
  add_on_fragments({"decode_stream_coopmat", "decode_stream_emulated"},
                   {beyond_f16(bf16_step, 20.0f, "above"), beyond_f16(bf16_step, 112.0f, "near bf16's top, above"),
                    beyond_f16(bf16_step, -30.0f, "below"), v_spread(bf16_mqa_step)},
                   {"_bf16", "_bf16kv"});

  if (full) {
    // Model-sized shapes for the GPU.
    for (uint32_t L : {4096u, 32768u}) {
      TextCase c = make_text_case(4, 1, 32, 8, 128, L);
      c.params.start_pos = {L - 1};
      c.q = DType::f32;
      c.kv = DType::f16;
      set_layout(c, KvLayout::paged);
      add(c);
    }
    TextCase c = make_text_case(1, 512, 32, 8, 128, 512);
    c.params.causal = true;
    c.q = c.kv = DType::f16;
    set_layout(c, KvLayout::contiguous);
    add(c);
  }
  return grid;
}

std::vector<CheckCase> text_check_cases(const DeviceCaps& caps, GridSize size) {
  std::vector<CheckCase> out;
  for (auto& c : text_check_grid(caps, size)) {
    std::string name = c.name.empty() ? describe(c) : c.name;
    out.push_back({name, [c](Context& ctx, const RunOptions& o) { return run_text_case(ctx, c, o); }});
  }
  return out;
}

std::vector<CheckCase> text_demo_cases(DemoSize size) {
  const bool cpu = size == DemoSize::cpu;
  const uint32_t context = 4096, prompt = cpu ? 64 : 512;  // a decode step is cheap on CPUs too
  TextCase decode;
  decode.name = fmt::format("llama3-8b decode (H32/8 D128 L{} f16 KV)", context);
  auto& p = decode.params;
  p.num_heads = 32;
  p.num_kv_heads = 8;
  p.head_dim = 128;
  p.kv_len = {context};
  p.kv_capacity = context;
  p.start_pos = {context - 1};
  p.causal = true;
  decode.kv = DType::f16;
  TextCase prefill = decode;
  prefill.name = fmt::format("llama3-8b prefill (S{} causal f16)", prompt);
  prefill.params.seq_len = prompt;
  prefill.params.kv_len = {prompt};
  prefill.params.kv_capacity = prompt;
  prefill.params.start_pos = {0};
  prefill.q = prefill.kv = prefill.out = DType::f16;
  std::vector<CheckCase> out;
  for (auto& c : {decode, prefill})
    out.push_back({c.name, [c](Context& ctx, const RunOptions& o) { return run_text_case(ctx, c, o); }});
  return out;
}

}  // namespace vkattn::check

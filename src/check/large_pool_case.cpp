#include "check/large_pool_case.hpp"

#include <fmt/format.h>

#include "check/host_tensor.hpp"
#include "planner/text_planner.hpp"
#include "planner/text_variants.hpp"
#include "reference/text_reference.hpp"
#include "vkattn/error.hpp"
#include "vkattn/recorder.hpp"

namespace vkattn::check {

CheckResult run_large_pool_case(Context& ctx, const LargePoolCase& c, const RunOptions&) {
  CheckResult r;
  r.name = c.name;
  r.tol = reference::tolerance_for(c.call.q, c.call.kv, c.call.out);
  try {
    TextAttentionParams p = c.call.params;
    const uint64_t row = uint64_t(p.num_kv_heads) * p.head_dim;
    const uint64_t page_elems = uint64_t(p.kv_capacity) * row;
    const uint64_t page_bytes = dtype_storage_bytes(c.call.kv, page_elems);
    const uint32_t used = p.batch * p.max_pages;  // pages the call reads
    const uint64_t pages = std::max<uint64_t>(used + 1, (c.pool_bytes + page_bytes - 1) / page_bytes);
    if (pages > UINT32_MAX) throw Error(ErrorKind::invalid_argument, "pool_bytes: expected fewer than 2^32 pages");
    p.num_pages = static_cast<uint32_t>(pages);

    // Used page u sits at pool page (pages - 1) - u * stride: spread over the
    // pool from its very last page down.
    const uint64_t stride = std::max<uint64_t>(1, (pages - 1) / used);
    std::vector<uint32_t> table(used);
    for (uint32_t u = 0; u < used; ++u) table[u] = static_cast<uint32_t>(pages - 1 - u * stride);
    check_page_table(p, table);

    std::mt19937 rng(c.call.seed);
    const Shape q_shape{p.batch, p.seq_len, p.num_heads, p.head_dim};
    const Shape page_shape{p.kv_capacity, p.num_kv_heads, p.head_dim};
    host::Values q = host::to_storage(c.call.q, host::gaussian(rng, element_count(q_shape), c.call.logit_scale));
    host::Values k = host::to_storage(c.call.kv, host::gaussian(rng, used * page_elems, 1.0f));
    host::Values v = host::to_storage(c.call.kv, host::gaussian(rng, used * page_elems, 1.0f));

    TextAttentionTensors t;
    t.q = host::upload(ctx, c.call.q, q_shape, q.bytes);
    t.out = ctx.tensor(c.call.out, q_shape);
    t.k = ctx.tensor(c.call.kv, {p.num_pages, p.kv_capacity, p.num_kv_heads, p.head_dim});
    t.v = ctx.tensor(c.call.kv, {p.num_pages, p.kv_capacity, p.num_kv_heads, p.head_dim});
    for (uint32_t u = 0; u < used; ++u) {
      for (auto [pool, host] : {std::pair{&t.k, &k}, {&t.v, &v}}) {
        const Tensor page(pool->allocation(), pool->buffer(), pool->offset() + table[u] * page_bytes, page_bytes,
                          c.call.kv, page_shape);
        ctx.upload(page, std::span(host->bytes).subspan(u * page_bytes, page_bytes));
      }
    }
    t.page_table = host::upload_u32(ctx, table).reshaped({p.batch, p.max_pages});
    host::Values hot_k, hot_v;
    if (p.layout == KvLayout::tiered) {
      const Shape hot_shape{p.batch, p.hot_window, p.num_kv_heads, p.head_dim};
      hot_k = host::to_storage(DType::f16, host::gaussian(rng, element_count(hot_shape), 1.5f));
      hot_v = host::to_storage(DType::f16, host::gaussian(rng, element_count(hot_shape), 1.5f));
      t.hot_k = host::upload(ctx, DType::f16, hot_shape, hot_k.bytes);
      t.hot_v = host::upload(ctx, DType::f16, hot_shape, hot_v.bytes);
    }

    Recorder rec(ctx);
    const TextCallInfo info = text_attention(rec, p, t, plan_options(c.call));
    r.variant = info.variant;
    r.reason = info.reason;
    rec.run();
    std::vector<std::byte> out_bytes(t.out.bytes());
    ctx.download(t.out, out_bytes);
    const std::vector<float> got = host::from_storage(c.call.out, out_bytes, element_count(q_shape));

    // The oracle reads the same keys from a pool of just the used pages.
    TextAttentionParams compact = p;
    compact.num_pages = used;
    std::vector<uint32_t> compact_table(used);
    for (uint32_t u = 0; u < used; ++u) compact_table[u] = u;
    const auto want =
        reference::text_attention(compact, q.values, k.values, v.values, compact_table, hot_k.values, hot_v.values);
    r.cmp = reference::compare(got, want, r.tol);
    r.passed = r.cmp.passed;
    const bool past_binding = t.k.bytes() > ctx.caps().max_storage_buffer_range;
    if (past_binding && r.reason.find("device addresses") == std::string::npos) {
      r.passed = false;
      r.error = fmt::format("expected a pool of {} bytes (past the {}-byte binding range) read by device address, "
                            "got: {}", t.k.bytes(), ctx.caps().max_storage_buffer_range, r.reason);
    }
  } catch (const std::exception& e) {
    r.error = e.what();
    r.passed = false;
  }
  return r;
}

std::vector<LargePoolCase> large_pool_cases(const DeviceCaps& caps, uint64_t pool_bytes, bool every_engine) {
  std::vector<LargePoolCase> out;
  uint32_t seed = 300;
  const std::string size = pool_bytes >= (1ull << 30) ? fmt::format("{} GiB", pool_bytes >> 30)
                                                      : fmt::format("{} KiB", pool_bytes >> 10);
  auto add = [&](TextCase c, const std::string& what) {
    if (!c.variant.empty()) {
      const planner::TextVariant* v = planner::find_text_variant(c.variant);
      const auto& p = c.params;
      planner::TextShape shape = planner::text_shape_of(p, c.q, c.kv);
      shape.kv_by_address = pool_bytes > caps.max_storage_buffer_range;
      if (!v || !planner::text_geometry(*v, caps, shape).geometry) return;  // the device cannot run it
    }
    c.seed = seed++;
    c.out = c.q;
    c.logit_scale = 2.0f;
    out.push_back({fmt::format("pool {} x2 {}", size, what), c, pool_bytes});
  };
  auto shape = [](uint32_t s, std::vector<uint32_t> lens) {
    TextCase c;
    auto& p = c.params;
    p.batch = static_cast<uint32_t>(lens.size());
    p.seq_len = s;
    p.num_heads = 8;
    p.num_kv_heads = 2;
    p.head_dim = 128;
    p.causal = true;
    p.start_pos.clear();
    for (uint32_t len : lens) p.start_pos.push_back(len - s);
    p.kv_len = std::move(lens);
    c.q = DType::f32;
    c.kv = DType::f16;
    set_layout(c, KvLayout::paged);
    return c;
  };

  // The planner's choices: decode, and prefill in f16 (tensor cores where the
  // device has them); long contexts where the pool is GPU-sized.
  const std::vector<uint32_t> decode_lens = pool_bytes >= (1ull << 30) ? std::vector<uint32_t>{3000, 700}
                                                                        : std::vector<uint32_t>{600, 140};
  add(shape(1, decode_lens), "decode paged");
  {
    TextCase c = shape(40, {500, 90});
    c.q = DType::f16;
    add(c, "prefill paged f16");
  }
  {
    TextCase c = shape(1, decode_lens);
    c.params.cold_layout = KvLayout::paged;
    c.params.hot_window = 64;
    set_layout(c, KvLayout::tiered);
    add(c, "decode tiered cold paged");
  }
  if (!every_engine) return out;
  for (const auto& v : planner::text_variants()) {
    // One dtype pair per engine (f32 Q with f16 K/V for decode, f16 for
    // prefill), and 4-byte K/V rows once in each phase.
    const bool usual = v.kv == DType::f16 && v.q == (v.phase == Phase::decode ? DType::f32 : DType::f16);
    if (!usual && v.name != "decode_flash_f32" && v.name != "prefill_tiled_small_f32") continue;
    TextCase c = v.phase == Phase::decode ? shape(1, {300, 45}) : shape(24, {90, 30});
    if (v.phase == Phase::prefill) c.params.head_dim = 64;  // within every prefill engine's head dims
    c.q = v.q;
    c.kv = v.kv;
    c.variant = v.name;
    if (v.kind == planner::Kind::split) c.splits = 4;
    add(c, v.name);
  }
  return out;
}

}  // namespace vkattn::check

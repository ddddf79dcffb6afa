// Parity cases of tiered (hot/cold) KV caches for `vkattn check --family
// kvcache`: every engine over both cold layouts, the tier boundary inside
// tiles and splits, prefill chunks that see the whole context, GPU-side
// lengths with indirect dispatch, and hot windows longer than the context.
#include "check/kvtier_cases.hpp"

#include <fmt/format.h>

#include "check/large_pool_case.hpp"
#include "check/text_cases.hpp"
#include "planner/text_planner.hpp"
#include "planner/text_variants.hpp"

namespace vkattn::check {

namespace {

TextCase tiered_case(uint32_t b, uint32_t s, uint32_t h, uint32_t hkv, uint32_t d, std::vector<uint32_t> kv_len,
                     KvLayout cold, uint32_t hot_window) {
  TextCase c;
  auto& p = c.params;
  p.batch = b;
  p.seq_len = s;
  p.num_heads = h;
  p.num_kv_heads = hkv;
  p.head_dim = d;
  p.kv_len = std::move(kv_len);
  p.start_pos.clear();
  for (uint32_t len : p.kv_len) p.start_pos.push_back(len >= s ? len - s : 0);  // the queries are the last S keys
  p.causal = true;
  c.q = DType::f32;
  c.kv = DType::f16;
  set_tiered(c, cold, hot_window);
  return c;
}

bool runnable(const TextCase& c, const DeviceCaps& caps) {
  if (c.variant.empty()) return true;
  const planner::TextVariant* v = planner::find_text_variant(c.variant);
  const auto& p = c.params;
  planner::TextShape shape{p.batch, p.seq_len, p.num_heads, p.num_kv_heads, p.head_dim, p.kv_len[0], c.q, c.kv};
  return v && planner::text_geometry(*v, caps, shape).geometry.has_value();
}

}  // namespace

std::vector<TextCase> kvtier_check_grid(const DeviceCaps& caps, GridSize size) {
  const bool full = size == GridSize::full;
  std::vector<TextCase> grid;
  uint32_t seed = 100;
  auto add = [&](TextCase c, std::string name) {
    if (!runnable(c, caps)) return;  // the device cannot run the forced variant
    c.seed = seed++;
    c.out = c.q;
    c.logit_scale = 2.0f;
    c.name = "tiered " + name;
    grid.push_back(std::move(c));
  };

  // Decode, planner's choice: a batch whose second sequence is shorter than
  // the hot window (all hot) and whose third has no key at all.
  add(tiered_case(3, 1, 8, 2, 128, {100, 20, 0}, KvLayout::contiguous, 32), "decode batch cold contiguous");
  add(tiered_case(3, 1, 8, 2, 128, {100, 20, 0}, KvLayout::paged, 32), "decode batch cold paged");

  // A long context through split-KV decode: splits end inside both tiers.
  {
    TextCase c = tiered_case(1, 1, 4, 1, 64, {full ? 65536u : 6000u}, KvLayout::paged, 256);
    add(c, "decode long cold paged");
  }

  // Every decode engine, forced, lengths and positions from GPU buffers with
  // indirect dispatch, bf16 and f16 cold tiers.
  const char* decode_engines[] = {"decode_flash",   "decode_online_split", "decode_split",          "decode_online",
                                  "decode_subgroup", "decode_chunked",      "decode_flash_emulated", "decode_streaming",
                                  "decode_flash_coopmat", "decode_stream_emulated", "decode_stream_coopmat"};
  for (size_t i = 0; i < std::size(decode_engines); ++i) {
    TextCase c = tiered_case(2, 1, 8, 2, 128, {300, 45}, i % 2 ? KvLayout::contiguous : KvLayout::paged, 64);
    c.gpu_kv_len = c.gpu_start_pos = c.gpu_kv_start = c.indirect = true;
    if (i % 3 == 2 && planner::find_text_variant(std::string(decode_engines[i]) + "_bf16kv")) c.kv = DType::bf16;
    c.variant = std::string(decode_engines[i]) + "_" + planner::dtype_suffix(c.q, c.kv);
    if (planner::find_text_variant(c.variant)->kind == planner::Kind::split) c.splits = 4;
    add(c, fmt::format("{} gpu-lens indirect cold {}", c.variant, to_string(c.params.cold_layout)));
  }

  // Prefill: a chunk of 24 queries at the end of the context attends to all of
  // it (cold and hot), with a hot window shorter than the chunk, on every
  // prefill engine.
  const char* prefill_engines[] = {"prefill_tiled_large", "prefill_tiled_small", "prefill_streaming",
                                   "prefill_flash_emulated", "prefill_flash_coopmat"};
  for (size_t i = 0; i < std::size(prefill_engines); ++i) {
    TextCase c = tiered_case(2, 24, 4, 2, 64, {90, 30}, i % 2 ? KvLayout::paged : KvLayout::contiguous, 16);
    c.q = i % 2 ? DType::f16 : DType::f32;
    c.variant = std::string(prefill_engines[i]) + "_" + planner::dtype_suffix(c.q, c.kv);
    add(c, fmt::format("{} chunk over context cold {}", c.variant, to_string(c.params.cold_layout)));
  }

  // Masking and scoring on a tiered cache: a sliding window that ends inside
  // the cold tier, softcap and scale; keys that start past position 0.
  {
    TextCase c = tiered_case(1, 8, 4, 4, 64, {70}, KvLayout::paged, 24);
    c.params.kv_start = {9};
    c.params.start_pos = {71};
    set_tiered(c, KvLayout::paged, 24);  // the cold tier sized again for the new kv_start
    c.params.window = 40;
    c.params.softcap = 30.0f;
    c.params.scale = 0.3f;
    add(c, "window softcap kv_start cold paged");
  }
  // Per-sequence host values (scratch buffers), hot window longer than every sequence.
  add(tiered_case(2, 3, 4, 1, 96, {12, 7}, KvLayout::contiguous, 64), "prefill all hot");
  return grid;
}

std::vector<CheckCase> kvtier_check_cases(const DeviceCaps& caps, GridSize size) {
  std::vector<CheckCase> out;
  for (auto& c : kvtier_check_grid(caps, size))
    out.push_back({c.name, [c](Context& ctx, const RunOptions& o) { return run_text_case(ctx, c, o); }});
  // Pools past one storage-buffer binding: every engine where the binding
  // range was lowered to test them ($VKATTN_MAX_STORAGE_BUFFER_RANGE), and a
  // 20 GiB pool (K and V 10 GiB each) in the full grid of a GPU with the memory.
  std::vector<LargePoolCase> pools;
  if (caps.max_storage_buffer_range <= kLoweredBindingRange)
    pools = large_pool_cases(caps, 4 * caps.max_storage_buffer_range, true);
  else if (size == GridSize::full && caps.device_local_bytes >= (48ull << 30))
    pools = large_pool_cases(caps, 10ull << 30, false);
  for (auto& c : pools)
    out.push_back({c.name, [c](Context& ctx, const RunOptions& o) { return run_large_pool_case(ctx, c, o); }});
  return out;
}

std::vector<CheckCase> kvtier_demo_cases(DemoSize) {
  // A decode step of Llama-3-8B's shape over a 4096-token tiered cache: 256 hot
  // keys in f16, the rest in a paged cold tier.
  TextCase c = tiered_case(1, 1, 32, 8, 128, {4096}, KvLayout::paged, 256);
  c.name = "llama3-8b decode tiered (hot 256, L4096)";
  return {{c.name, [c](Context& ctx, const RunOptions& o) { return run_text_case(ctx, c, o); }}};
}

}  // namespace vkattn::check

#include "reference/text_reference.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "reference/argument_checks.hpp"
#include "reference/parallel.hpp"
#include "reference/row_softmax.hpp"
#include "shaders/text_kv_tier.h"
#include "vkattn/error.hpp"

namespace vkattn::reference {

namespace {

void require_positive(uint32_t value, const char* name) {
  if (value == 0) invalid(fmt::format("{}: expected > 0, got 0", name));
}

void require_per_sequence(const std::vector<uint32_t>& values, uint32_t batch, const char* name) {
  if (values.size() != 1 && values.size() != batch)
    invalid(fmt::format("{}: expected 1 or batch = {} values, got {}", name, batch, values.size()));
}

void validate(const TextAttentionParams& p, std::span<const float> q, std::span<const float> k,
              std::span<const float> v, std::span<const uint32_t> page_table, std::span<const float> hot_k,
              std::span<const float> hot_v) {
  require_positive(p.num_heads, "num_heads");
  require_positive(p.num_kv_heads, "num_kv_heads");
  require_positive(p.head_dim, "head_dim");
  if (p.num_heads % p.num_kv_heads != 0)
    invalid(fmt::format("num_kv_heads: expected a divisor of num_heads = {}, got {}", p.num_heads,
                        p.num_kv_heads));
  if (p.scale && !std::isfinite(*p.scale)) invalid(fmt::format("scale: expected a finite value, got {}", *p.scale));
  if (!(p.softcap >= 0.0f) || !std::isfinite(p.softcap))
    invalid(fmt::format("softcap: expected a finite value >= 0, got {}", p.softcap));
  require_per_sequence(p.kv_len, p.batch, "kv_len");
  require_per_sequence(p.start_pos, p.batch, "start_pos");
  require_per_sequence(p.kv_start, p.batch, "kv_start");

  const uint64_t B = p.batch, S = p.seq_len, H = p.num_heads, Hkv = p.num_kv_heads, D = p.head_dim;
  const uint64_t C = p.kv_capacity;
  require_size(q, B * S * H * D, "q", fmt::format("[B, S, H, D] = [{}, {}, {}, {}]", B, S, H, D));
  if (p.layout == KvLayout::tiered) {
    if (p.hot_window == 0) invalid("hot_window: expected > 0 for the tiered layout, got 0");
    const std::string shape = fmt::format("[B, hot_window, Hkv, D] = [{}, {}, {}, {}]", B, p.hot_window, Hkv, D);
    require_size(hot_k, B * p.hot_window * Hkv * D, "hot_k", shape);
    require_size(hot_v, B * p.hot_window * Hkv * D, "hot_v", shape);
  } else if (!hot_k.empty() || !hot_v.empty()) {
    invalid(fmt::format("hot_k: expected no entries for the {} layout, got {}", to_string(p.layout), hot_k.size()));
  }

  if (p.slot_layout() != KvLayout::paged) {
    const std::string shape = fmt::format("[B, C, Hkv, D] = [{}, {}, {}, {}]", B, C, Hkv, D);
    require_size(k, B * C * Hkv * D, "k", shape);
    require_size(v, B * C * Hkv * D, "v", shape);
    if (!page_table.empty())
      invalid(fmt::format("page_table: expected no entries for the {} layout, got {}", to_string(p.layout),
                          page_table.size()));
    for (uint32_t b = 0; b < p.batch; ++b) {
      const uint64_t len = p.kv_len_of(b), end = uint64_t{p.kv_start_of(b)} + len;
      if (p.slot_layout() == KvLayout::contiguous && end > C)
        invalid(fmt::format("kv_capacity: expected >= kv_start + kv_len = {} for sequence {}, got {}", end, b, C));
      if (p.layout == KvLayout::ring && len > C)
        invalid(fmt::format("kv_capacity: expected >= kv_len = {} ring slots for sequence {}, got {}", len, b, C));
    }
    return;
  }

  // Paged: kv_capacity is the page size.
  if (C == 0) invalid("kv_capacity: expected the page size (> 0) for the paged layout, got 0");
  const uint64_t pool = uint64_t{p.num_pages} * C * Hkv * D;
  const std::string shape = fmt::format("[P, page_size, Hkv, D] = [{}, {}, {}, {}]", p.num_pages, C, Hkv, D);
  require_size(k, pool, "k", shape);
  require_size(v, pool, "v", shape);
  require_size(page_table, B * p.max_pages, "page_table", fmt::format("[B, max_pages] = [{}, {}]", B, p.max_pages));
  for (uint32_t b = 0; b < p.batch; ++b) {
    const uint64_t len = p.kv_len_of(b);
    if (len == 0) continue;
    const uint64_t first_page = p.kv_start_of(b) / C, last_page = (p.kv_start_of(b) + len - 1) / C;
    if (last_page >= p.max_pages)
      invalid(fmt::format("max_pages: expected > {} (the page of position {} of sequence {}), got {}", last_page,
                          p.kv_start_of(b) + len - 1, b, p.max_pages));
    for (uint64_t i = first_page; i <= last_page; ++i) {
      const uint32_t page = page_table[b * p.max_pages + i];
      if (page >= p.num_pages)
        invalid(fmt::format("page_table: expected entries < num_pages = {}, got {} at [{}][{}]", p.num_pages, page,
                            b, i));
    }
  }
}

}  // namespace

std::vector<double> text_attention(const TextAttentionParams& p, std::span<const float> q,
                                   std::span<const float> k, std::span<const float> v,
                                   std::span<const uint32_t> page_table, std::span<const float> hot_k,
                                   std::span<const float> hot_v) {
  validate(p, q, k, v, page_table, hot_k, hot_v);
  const uint64_t S = p.seq_len, H = p.num_heads, Hkv = p.num_kv_heads, D = p.head_dim;
  const uint64_t C = p.kv_capacity;
  const uint64_t group = H / Hkv;
  const double scale = p.effective_scale();
  const double softcap = p.softcap;

  // Where position `pos` of sequence b lives: a row (a [*, Hkv, D] block) of
  // k/v, or of hot_k/hot_v when `hot`.
  struct Row {
    uint64_t index;
    bool hot;
  };
  auto kv_row = [&](uint64_t b, uint64_t pos, bool hot) -> Row {
    if (hot) return {b * p.hot_window + text::text_tier_hot_slot(uint32_t(pos), p.hot_window), true};
    switch (p.slot_layout()) {
      case KvLayout::contiguous: return {b * C + pos, false};
      case KvLayout::ring: return {b * C + pos % C, false};
      case KvLayout::paged: return {uint64_t{page_table[b * p.max_pages + pos / C]} * C + pos % C, false};
      case KvLayout::tiered: break;  // not a slot layout
    }
    return {0, false};
  };

  std::vector<double> out(q.size(), 0.0);
  // One output row per (b, i, h), independent of the others.
  parallel_rows(uint64_t{p.batch} * S * H, [&](uint64_t first, uint64_t last) {
    std::vector<double> scores;
    std::vector<Row> rows;  // k/v rows of the visible keys, matching `scores`
    for (uint64_t row_index = first; row_index < last; ++row_index) {
      const uint64_t b = row_index / (S * H), i = row_index / H % S, h = row_index % H;
      const uint64_t kv_len = p.kv_len_of(b), kv_start = p.kv_start_of(b), start_pos = p.start_pos_of(b);
      const uint64_t q_pos = start_pos + i;
      const uint64_t kv_head = h / group;
      const float* qrow = &q[((b * S + i) * H + h) * D];
      const uint64_t hot_from =
          p.layout == KvLayout::tiered ? text::text_tier_hot_from(uint32_t(kv_len), p.hot_window) : kv_len;
      scores.clear();
      rows.clear();
      for (uint64_t j = 0; j < kv_len; ++j) {
        const uint64_t k_pos = kv_start + j;
        if (!key_visible(p.causal, p.window, q_pos, k_pos)) continue;
        const Row row = kv_row(b, k_pos, j >= hot_from);
        const float* krow = &(row.hot ? hot_k : k)[(row.index * Hkv + kv_head) * D];
        double dot = 0.0;
        for (uint64_t d = 0; d < D; ++d) dot += double{qrow[d]} * double{krow[d]};
        scores.push_back(capped_score(dot, scale, softcap));
        rows.push_back(row);
      }
      softmax_weighted_sum(scores, &out[((b * S + i) * H + h) * D], D, [&](size_t t) {
        return &(rows[t].hot ? hot_v : v)[(rows[t].index * Hkv + kv_head) * D];
      });
    }
  });
  return out;
}

}  // namespace vkattn::reference

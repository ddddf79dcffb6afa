#include "check/text_work.hpp"

#include <algorithm>
#include <cstdint>

#include "vkattn/kvcache.hpp"

namespace vkattn::check {

TextWork text_work(const TextAttentionParams& p, DType q, DType kv, DType out) {
  double visible = 0.0, hot = 0.0;  // hot: keys of a tiered cache's f16 hot ring
  double pairs = 0.0;  // (query, visible key) pairs, counted exactly (causal and windows)
  for (uint32_t b = 0; b < p.batch; ++b) {
    double L = p.kv_len_of(b);
    if (p.window) L = std::min<double>(L, p.window);
    if (p.causal && p.seq_len > 1) L = std::max(1.0, L - p.seq_len / 2.0);
    visible += L;
    if (p.layout == KvLayout::tiered) hot += std::min<double>(L, p.hot_window);
    if (p.kv_len_of(b) == 0) continue;
    for (uint32_t i = 0; i < p.seq_len; ++i) {
      const int64_t qpos = int64_t(p.start_pos_of(b)) + i;
      int64_t lo = p.kv_start_of(b), hi = int64_t(p.kv_start_of(b)) + p.kv_len_of(b) - 1;
      if (p.causal) hi = std::min(hi, qpos);
      if (p.window) lo = std::max(lo, qpos - int64_t(p.window) + 1);
      pairs += double(std::max<int64_t>(0, hi - lo + 1));
    }
  }
  const double q_elems = double(p.batch) * p.seq_len * p.num_heads * p.head_dim;
  // K and V of one position, with the f16 scales of quantized caches.
  const double kv_bytes_per_key = double(kv_bytes_per_token(kv, p.num_kv_heads, p.head_dim, p.kv_quant_group));
  const double hot_bytes_per_key = double(kv_bytes_per_token(DType::f16, p.num_kv_heads, p.head_dim));
  return {(visible - hot) * kv_bytes_per_key + hot * hot_bytes_per_key +
              q_elems * (dtype_bits(q) + dtype_bits(out)) / 8,
          4.0 * p.num_heads * p.head_dim * pairs};
}

}  // namespace vkattn::check

#include "check/text_work.hpp"

#include <algorithm>

namespace vkattn::check {

TextWork text_work(const TextAttentionParams& p, DType q, DType kv, DType out) {
  double visible = 0.0;
  for (uint32_t b = 0; b < p.batch; ++b) {
    double L = p.kv_len_of(b);
    if (p.window) L = std::min<double>(L, p.window);
    if (p.causal && p.seq_len > 1) L = std::max(1.0, L - p.seq_len / 2.0);
    visible += L;
  }
  const double q_elems = double(p.batch) * p.seq_len * p.num_heads * p.head_dim;
  const double kv_bytes_per_key = 2.0 * p.num_kv_heads * p.head_dim * dtype_bits(kv) / 8;
  return {visible * kv_bytes_per_key + q_elems * (dtype_bits(q) + dtype_bits(out)) / 8,
          4.0 * p.num_heads * p.seq_len * p.head_dim * visible};
}

}  // namespace vkattn::check

// What the attention oracles share for one output row: the mask test and the
// scaled, soft-capped score (text, BDPA), and the softmax-weighted sum of the
// visible keys' value rows (every family), all in float64.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace vkattn::reference {

// Causal hides keys after the query; a window W hides keys at or before q_pos - W.
inline bool key_visible(bool causal, uint32_t window, uint64_t q_pos, uint64_t k_pos) {
  if (causal && k_pos > q_pos) return false;
  return window == 0 || q_pos < k_pos + window;
}

inline double capped_score(double dot, double scale, double softcap) {
  const double score = scale * dot;
  return softcap > 0.0 ? softcap * std::tanh(score / softcap) : score;
}

// out_row[d] += softmax(scores)[t] * value_row(t)[d] over the visible keys t
// (value_row(t) returns anything indexable by d). `scores` is overwritten. No
// visible key leaves the row as it was (zeros).
template <class ValueRow>
void softmax_weighted_sum(std::vector<double>& scores, double* out_row, uint64_t head_dim, ValueRow value_row) {
  if (scores.empty()) return;
  const double max_score = *std::max_element(scores.begin(), scores.end());
  double sum = 0.0;
  for (double& s : scores) sum += (s = std::exp(s - max_score));
  for (size_t t = 0; t < scores.size(); ++t) {
    const auto& row = value_row(t);
    const double w = scores[t] / sum;
    for (uint64_t d = 0; d < head_dim; ++d) out_row[d] += w * double(row[d]);
  }
}

}  // namespace vkattn::reference

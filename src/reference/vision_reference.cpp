#include "reference/vision_reference.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "reference/argument_checks.hpp"
#include "reference/parallel.hpp"
#include "reference/row_softmax.hpp"
#include "vkattn/error.hpp"

namespace vkattn::reference {

std::vector<double> pos_embed_add(std::span<const float> hidden, std::span<const float> table, uint32_t patches,
                                  uint32_t hidden_size, uint32_t pos_size, uint32_t patches_x) {
  const uint64_t P = patches, Dh = hidden_size, N = pos_size;
  require_size(hidden, P * Dh, "hidden", fmt::format("[patches, hidden] = [{}, {}]", P, Dh));
  require_size(table, 2 * N * Dh, "table", fmt::format("[2, pos_size, hidden] = [2, {}, {}]", N, Dh));
  if (patches_x == 0) invalid("patches_x: expected > 0, got 0");
  if (P > 0) {
    // The largest coordinates are reached at the last patch (y) and, once a row is full, at x = patches_x - 1.
    const uint64_t max_x = std::min<uint64_t>(P, patches_x) - 1, max_y = (P - 1) / patches_x;
    if (max_x >= N)
      invalid(fmt::format("pos_size: expected > {} (largest patch x for patches_x = {}), got {}", max_x, patches_x, N));
    if (max_y >= N)
      invalid(fmt::format("pos_size: expected > {} (largest patch y for {} patches, patches_x = {}), got {}", max_y,
                          P, patches_x, N));
  }

  std::vector<double> out(hidden.size());
  for (uint64_t p = 0; p < P; ++p) {
    const uint64_t px = p % patches_x, py = p / patches_x;
    for (uint64_t d = 0; d < Dh; ++d)
      out[p * Dh + d] = double{hidden[p * Dh + d]} + double{table[px * Dh + d]} + double{table[(N + py) * Dh + d]};
  }
  return out;
}

std::vector<double> vision_attention(std::span<const float> q, std::span<const float> k, std::span<const float> v,
                                     uint32_t patches, uint32_t num_heads, uint32_t head_dim, double scale) {
  const uint64_t P = patches, H = num_heads, D = head_dim;
  const std::string shape = fmt::format("[P, H, D] = [{}, {}, {}]", P, H, D);
  require_size(q, P * H * D, "q", shape);
  require_size(k, P * H * D, "k", shape);
  require_size(v, P * H * D, "v", shape);
  if (!std::isfinite(scale)) invalid(fmt::format("scale: expected a finite value, got {}", scale));

  std::vector<double> out(q.size(), 0.0);
  parallel_rows(P, [&](uint64_t first, uint64_t last) {
    std::vector<double> scores(P);
    for (uint64_t p = first; p < last; ++p) {
      for (uint64_t h = 0; h < H; ++h) {
        const float* qrow = &q[(p * H + h) * D];
        for (uint64_t t = 0; t < P; ++t) {
          const float* krow = &k[(t * H + h) * D];
          double dot = 0.0;
          for (uint64_t d = 0; d < D; ++d) dot += double{qrow[d]} * double{krow[d]};
          scores[t] = scale * dot;
        }
        softmax_weighted_sum(scores, &out[(p * H + h) * D], D, [&](size_t t) { return &v[(t * H + h) * D]; });
      }
    }
  });
  return out;
}

}  // namespace vkattn::reference

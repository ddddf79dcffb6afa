#include "reference/audio_reference.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>

#include "reference/argument_checks.hpp"
#include "reference/parallel.hpp"
#include "reference/row_softmax.hpp"
#include "vkattn/error.hpp"

namespace vkattn::reference {

namespace {

double softplus(double x) { return x > 30.0 ? x : std::log1p(std::exp(x)); }

void validate(const AudioAttentionParams& p, std::span<const float> q, std::span<const float> k,
              std::span<const float> v, std::span<const float> per_dim_scale, std::span<const float> rel_pos) {
  if (p.num_heads == 0) invalid("num_heads: expected > 0, got 0");
  if (p.head_dim == 0) invalid("head_dim: expected > 0, got 0");
  if (p.chunk == 0) invalid("chunk: expected > 0, got 0");
  if (!(p.logit_cap >= 0.0f) || !std::isfinite(p.logit_cap))
    invalid(fmt::format("logit_cap: expected a finite value >= 0, got {}", p.logit_cap));
  const uint64_t T = p.frames, H = p.num_heads, D = p.head_dim;
  const uint64_t span = uint64_t{p.max_past} + p.max_future + 1;
  const std::string shape = fmt::format("[T, H, D] = [{}, {}, {}]", T, H, D);
  require_size(q, T * H * D, "q", shape);
  require_size(k, T * H * D, "k", shape);
  require_size(v, T * H * D, "v", shape);
  require_size(per_dim_scale, D, "per_dim_scale", fmt::format("[D] = [{}]", D));
  require_size(rel_pos, span * H * D, "rel_pos",
               fmt::format("[max_past + max_future + 1, H, D] = [{}, {}, {}]", span, H, D));
}

}  // namespace

std::vector<double> audio_attention(const AudioAttentionParams& p, std::span<const float> q,
                                    std::span<const float> k, std::span<const float> v,
                                    std::span<const float> per_dim_scale, std::span<const float> rel_pos) {
  validate(p, q, k, v, per_dim_scale, rel_pos);
  const int64_t T = p.frames, H = p.num_heads, D = p.head_dim;
  const int64_t W = p.chunk, P = p.max_past, F = p.max_future, C = W + P + F;
  const int64_t past_reach = p.include_past_edge ? P : P - 1;  // largest visible t_q - t_k
  const double cap = p.logit_cap;

  // Per-dimension query factor D^-1/2 / ln 2 * softplus(s_d); key factor softplus(1) / softplus(0).
  std::vector<double> q_factor(D);
  for (int64_t d = 0; d < D; ++d)
    q_factor[d] = 1.0 / std::sqrt(double(D)) / std::numbers::ln2 * softplus(per_dim_scale[d]);
  const double k_factor = p.scale_keys ? std::log1p(std::numbers::e) / std::numbers::ln2 : 1.0;

  auto at = [&](std::span<const float> x, int64_t row, int64_t h) { return &x[(row * H + h) * D]; };

  std::vector<double> out(q.size(), 0.0);
  // One query frame per row (block u, row r), independent of the others.
  parallel_rows(static_cast<uint64_t>(T), [&](uint64_t first, uint64_t last) {
    std::vector<double> qs(D), logits;
    std::vector<int64_t> keys;  // t_k of each visible slot, matching `logits`
    for (int64_t t_q = static_cast<int64_t>(first); t_q < static_cast<int64_t>(last); ++t_q) {
      const int64_t u = t_q / W, r = t_q % W;
      for (int64_t h = 0; h < H; ++h) {
        const float* qrow = at(q, t_q, h);
        for (int64_t d = 0; d < D; ++d) qs[d] = qrow[d] * q_factor[d];
        logits.clear();
        keys.clear();
        for (int64_t c = 0; c < C; ++c) {
          const int64_t t_k = u * W + c - P;
          const int64_t s = c - r;  // relative-position row; t_q - t_k = P - s
          if (t_k < 0 || t_k >= T) continue;
          if (t_q - t_k > past_reach || t_k - t_q > F) continue;
          if (s < 0 || s > P + F) continue;  // implied by the line above; kept for the R bounds
          const float* krow = at(k, t_k, h);
          const float* rrow = at(rel_pos, s, h);
          double ac = 0.0, bd = 0.0;
          for (int64_t d = 0; d < D; ++d) {
            ac += qs[d] * (krow[d] * k_factor);
            bd += qs[d] * rrow[d];
          }
          double z = ac + bd;
          if (cap > 0.0) z = cap * std::tanh(z / cap);
          logits.push_back(z);
          keys.push_back(t_k);
        }
        softmax_weighted_sum(logits, &out[(t_q * H + h) * D], uint64_t(D), [&](size_t i) { return at(v, keys[i], h); });
      }
    }
  });
  return out;
}

}  // namespace vkattn::reference

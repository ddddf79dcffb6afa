#include "reference/bdpa_reference.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "reference/argument_checks.hpp"
#include "reference/parallel.hpp"
#include "reference/row_softmax.hpp"
#include "reference/text_reference.hpp"
#include "vkattn/error.hpp"

namespace vkattn::reference {

namespace {

void require_count(const char* name, size_t got, uint64_t want) {
  if (got != want) invalid(fmt::format("{}: expected {} values, got {}", name, want, got));
}

}  // namespace

void rope_row(std::span<double> row, uint32_t rotary_dim, RopePairing pairing, uint64_t pos,
              std::span<const float> cos, std::span<const float> sin) {
  const uint64_t half = rotary_dim / 2;
  for (uint64_t i = 0; i < half; ++i) {
    // The pair (a, b) rotates by the angle of (pos, i): a' = a c - b s, b' = b c + a s.
    const uint64_t a = pairing == RopePairing::interleaved ? 2 * i : i;
    const uint64_t b = pairing == RopePairing::interleaved ? 2 * i + 1 : i + half;
    const double c = cos[pos * half + i], s = sin[pos * half + i];
    const double x = row[a], y = row[b];
    row[a] = x * c - y * s;
    row[b] = y * c + x * s;
  }
}

std::vector<double> bdpa_attention(const BdpaParams& p, std::span<const float> q, const BdpaCache& cache,
                                   std::span<const float> rope_cos, std::span<const float> rope_sin) {
  const uint64_t S = p.seq_len, H = p.num_heads, Hkv = p.num_kv_heads, D = p.head_dim;
  require_count("q", q.size(), p.batch * S * H * D);
  require_count("basis_k", cache.basis_k.size(), uint64_t(p.num_basis) * Hkv * D);
  require_count("basis_v", cache.basis_v.size(), uint64_t(p.num_basis) * Hkv * D);
  require_count("residual_k", cache.residual_k.size(), uint64_t(p.num_residual) * Hkv * D);
  require_count("residual_v", cache.residual_v.size(), uint64_t(p.num_residual) * Hkv * D);
  require_count("residual_k_scale", cache.scale_k.size(), uint64_t(p.num_residual) * Hkv);
  require_count("residual_v_scale", cache.scale_v.size(), uint64_t(p.num_residual) * Hkv);
  if (p.rotary_dim > 0) {
    require_count("rope_cos", rope_cos.size(), uint64_t(p.rope_positions) * p.rotary_dim / 2);
    require_count("rope_sin", rope_sin.size(), uint64_t(p.rope_positions) * p.rotary_dim / 2);
  }
  check_bdpa_index(p, cache.index);
  const uint64_t group = H / Hkv;
  const double scale = p.effective_scale();

  // Key or value row of entry j of sequence b, KV head kvh, rebuilt (and, for keys, rotated).
  auto rebuild = [&](bool is_v, uint64_t b, uint64_t j, uint64_t kvh, std::vector<double>& row) {
    const uint32_t* e = &cache.index[(b * p.kv_capacity + j) * 3];
    const uint64_t brow = uint64_t(e[0]) * Hkv + kvh, rrow = uint64_t(e[1]) * Hkv + kvh;
    const auto& basis = is_v ? cache.basis_v : cache.basis_k;
    const auto& res = is_v ? cache.residual_v : cache.residual_k;
    const double s = is_v ? cache.scale_v[rrow] : cache.scale_k[rrow];
    row.resize(D);
    for (uint64_t d = 0; d < D; ++d) row[d] = double{basis[brow * D + d]} + s * static_cast<double>(res[rrow * D + d]);
    if (!is_v && p.rotary_dim > 0) rope_row(row, p.rotary_dim, p.pairing, e[2], rope_cos, rope_sin);
  };

  std::vector<double> out(q.size(), 0.0);
  parallel_rows(uint64_t{p.batch} * S * H, [&](uint64_t first, uint64_t last) {
    std::vector<double> scores, krow;
    std::vector<uint64_t> keys;  // entries of the visible keys, matching `scores`
    for (uint64_t row_index = first; row_index < last; ++row_index) {
      const uint64_t b = row_index / (S * H), i = row_index / H % S, h = row_index % H;
      const uint64_t q_pos = uint64_t(p.start_pos_of(b)) + i, kvh = h / group;
      const float* qrow = &q[((b * S + i) * H + h) * D];
      scores.clear();
      keys.clear();
      for (uint64_t j = 0; j < p.kv_len_of(b); ++j) {
        const uint64_t k_pos = cache.index[(b * p.kv_capacity + j) * 3 + 2];
        if (!key_visible(p.causal, p.window, q_pos, k_pos)) continue;
        rebuild(false, b, j, kvh, krow);
        double dot = 0.0;
        for (uint64_t d = 0; d < D; ++d) dot += double{qrow[d]} * krow[d];
        scores.push_back(capped_score(dot, scale, p.softcap));
        keys.push_back(j);
      }
      softmax_weighted_sum(scores, &out[((b * S + i) * H + h) * D], D, [&](size_t t) -> const std::vector<double>& {
        rebuild(true, b, keys[t], kvh, krow);
        return krow;
      });
    }
  });
  return out;
}

std::vector<double> bdpa_unquantized(const BdpaParams& p, std::span<const float> q, std::span<const float> k,
                                     std::span<const float> v, std::span<const float> rope_cos,
                                     std::span<const float> rope_sin) {
  const uint64_t rows = uint64_t(p.batch) * p.kv_capacity * p.num_kv_heads, D = p.head_dim;
  require_count("k", k.size(), rows * D);
  std::vector<float> rotated(k.begin(), k.end());
  if (p.rotary_dim > 0) {
    const uint64_t need = uint64_t(p.kv_capacity) * p.rotary_dim / 2;  // one table row per position
    if (rope_cos.size() < need || rope_sin.size() < need)
      invalid(fmt::format("rope_cos: expected at least {} values per table (capacity positions), got {} and {}", need,
                          rope_cos.size(), rope_sin.size()));
    std::vector<double> row(D);
    for (uint64_t r = 0; r < rows; ++r) {
      for (uint64_t d = 0; d < D; ++d) row[d] = k[r * D + d];
      rope_row(row, p.rotary_dim, p.pairing, r / p.num_kv_heads % p.kv_capacity, rope_cos, rope_sin);
      for (uint64_t d = 0; d < D; ++d) rotated[r * D + d] = static_cast<float>(row[d]);
    }
  }
  return text_attention(p.contiguous_equivalent(), q, rotated, v);
}

}  // namespace vkattn::reference

// Float64 oracles for the vision tower: the 2D position-embedding add and
// bidirectional (unmasked) attention over patches.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace vkattn::reference {

// hidden [patches, hidden] plus the learned 2D embedding
// table [2, pos_size, hidden] (row 0: x embeddings, row 1: y embeddings):
//   out[p, d] = hidden[p, d] + table[0, p % patches_x, d] + table[1, p / patches_x, d].
// Throws Error naming the parameter on a size mismatch, patches_x == 0, or a
// patch x/y coordinate >= pos_size.
std::vector<double> pos_embed_add(std::span<const float> hidden, std::span<const float> table, uint32_t patches,
                                  uint32_t hidden_size, uint32_t pos_size, uint32_t patches_x);

// Bidirectional attention in the PHD layout: q, k, v and the result are
// [P, H, D]; out[p, h] = sum_t softmax_t(scale * q[p, h] . k[t, h]) v[t, h].
std::vector<double> vision_attention(std::span<const float> q, std::span<const float> k, std::span<const float> v,
                                     uint32_t patches, uint32_t num_heads, uint32_t head_dim, double scale);

}  // namespace vkattn::reference

// Float64 oracle for BDPA attention and its builder: the judge of the BDPA
// tests. Written for obvious correctness, not speed.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "vkattn/bdpa.hpp"

namespace vkattn::reference {

// A BDPA cache as host values (see vkattn/bdpa.hpp for the shapes): the basis
// already widened from its storage type, residuals as int8 values.
struct BdpaCache {
  std::vector<float> basis_k, basis_v;        // [num_basis, Hkv, D]
  std::vector<int8_t> residual_k, residual_v; // [num_residual, Hkv, D]
  std::vector<float> scale_k, scale_v;        // [num_residual, Hkv]
  std::vector<uint32_t> index;                // [B, capacity, 3]
};

// RoPE of one row at `pos` (cos/sin tables [positions, rotary_dim / 2]): the
// leading rotary_dim elements rotated in pairs as `pairing` says, in float64.
void rope_row(std::span<double> row, uint32_t rotary_dim, RopePairing pairing, uint64_t pos,
              std::span<const float> cos, std::span<const float> sin);

// Attention of q [B, S, H, D] over the cache: each key and value rebuilt as
// basis + scale * residual, keys rotated at their index position, masks on
// that position. Throws Error naming the parameter on a size mismatch or an
// index entry past the basis, the residual pool or the RoPE tables.
std::vector<double> bdpa_attention(const BdpaParams& p, std::span<const float> q, const BdpaCache& cache,
                                   std::span<const float> rope_cos = {}, std::span<const float> rope_sin = {});

// What BDPA approximates: attention over the contiguous pre-RoPE cache k, v
// [B, p.capacity, Hkv, D] (position j in slot j) with every key rotated once
// at its position, unquantized (the end-to-end judge of the builder + kernel).
std::vector<double> bdpa_unquantized(const BdpaParams& p, std::span<const float> q, std::span<const float> k,
                                     std::span<const float> v, std::span<const float> rope_cos,
                                     std::span<const float> rope_sin);

}  // namespace vkattn::reference

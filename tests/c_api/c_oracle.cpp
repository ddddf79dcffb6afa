#include "c_oracle.h"

#include <span>

#include "capi/capi_params.hpp"
#include "reference/audio_reference.hpp"
#include "reference/bdpa_reference.hpp"
#include "reference/rounding.hpp"
#include "reference/text_reference.hpp"
#include "reference/tolerance.hpp"
#include "reference/vision_reference.hpp"

namespace {

double error_of(const float* got, const std::vector<double>& want) {
  return vkattn::reference::max_relative_error(std::span<const float>(got, want.size()), want);
}

std::span<const float> span_of(const float* x, uint64_t n) { return {x, n}; }

uint64_t query_elements(const vkattn::BdpaParams& p) {
  return uint64_t{p.batch} * p.seq_len * p.num_heads * p.head_dim;
}

}  // namespace

extern "C" {

double c_oracle_tolerance(vkattn_dtype q, vkattn_dtype kv, vkattn_dtype out) {
  using vkattn::DType;
  return vkattn::reference::tolerance_for(DType(q), DType(kv), DType(out)).abs_rel;
}

void c_oracle_round_f16(float* x, size_t n) { vkattn::reference::round_to(vkattn::DType::f16, std::span(x, n)); }

double c_oracle_text_error(const vkattn_text_params* c, const float* q, const float* k, const float* v,
                           const float* hot_k, const float* hot_v, const float* got) {
  const vkattn::TextAttentionParams p = vkattn::capi::text_params_of(*c);
  const uint64_t row = uint64_t{p.num_kv_heads} * p.head_dim;
  const uint64_t nq = uint64_t{p.batch} * p.seq_len * p.num_heads * p.head_dim;
  const uint64_t nk = uint64_t{p.batch} * p.kv_capacity * row;
  const uint64_t nh = p.layout == vkattn::KvLayout::tiered ? uint64_t{p.batch} * p.hot_window * row : 0;
  return error_of(got, vkattn::reference::text_attention(p, span_of(q, nq), span_of(k, nk), span_of(v, nk), {},
                                                         span_of(hot_k, nh), span_of(hot_v, nh)));
}

double c_oracle_bdpa_error(const vkattn_bdpa_params* c, const float* q, const c_bdpa_cache* cache,
                           const float* rope_cos, const float* rope_sin, const float* got) {
  const vkattn::BdpaParams p = vkattn::capi::bdpa_params_of(*c);
  const uint64_t row = uint64_t{p.num_kv_heads} * p.head_dim, nb = p.num_basis * row, nr = p.num_residual * row;
  const uint64_t ns = uint64_t{p.num_residual} * p.num_kv_heads, nrope = uint64_t{p.rope_positions} * p.rotary_dim / 2;
  vkattn::reference::BdpaCache h;
  h.basis_k.assign(cache->basis_k, cache->basis_k + nb);
  h.basis_v.assign(cache->basis_v, cache->basis_v + nb);
  h.residual_k.assign(cache->residual_k, cache->residual_k + nr);
  h.residual_v.assign(cache->residual_v, cache->residual_v + nr);
  h.scale_k.assign(cache->scale_k, cache->scale_k + ns);
  h.scale_v.assign(cache->scale_v, cache->scale_v + ns);
  h.index.assign(cache->index, cache->index + uint64_t{p.batch} * p.kv_capacity * 3);
  return error_of(got, vkattn::reference::bdpa_attention(p, span_of(q, query_elements(p)), h,
                                                         span_of(rope_cos, nrope), span_of(rope_sin, nrope)));
}

double c_oracle_bdpa_unquantized_error(const vkattn_bdpa_params* c, const float* q, const float* k, const float* v,
                                       const float* rope_cos, const float* rope_sin, const float* got) {
  const vkattn::BdpaParams p = vkattn::capi::bdpa_params_of(*c);
  const uint64_t nk = uint64_t{p.batch} * p.kv_capacity * p.num_kv_heads * p.head_dim;
  const uint64_t nrope = uint64_t{p.rope_positions} * p.rotary_dim / 2;
  return error_of(got, vkattn::reference::bdpa_unquantized(p, span_of(q, query_elements(p)), span_of(k, nk),
                                                           span_of(v, nk), span_of(rope_cos, nrope),
                                                           span_of(rope_sin, nrope)));
}

double c_oracle_vision_error(const vkattn_vision_params* c, const float* q, const float* k, const float* v,
                             const float* got) {
  const vkattn::VisionAttentionParams p = vkattn::capi::vision_params_of(*c);
  const uint64_t n = uint64_t{p.patches} * p.num_heads * p.head_dim;
  return error_of(got, vkattn::reference::vision_attention(span_of(q, n), span_of(k, n), span_of(v, n), p.patches,
                                                           p.num_heads, p.head_dim, p.effective_scale()));
}

double c_oracle_pos_embed_error(const vkattn_pos_embed_params* c, const float* hidden, const float* table,
                                const float* got) {
  return error_of(got, vkattn::reference::pos_embed_add(span_of(hidden, uint64_t{c->patches} * c->hidden_size),
                                                        span_of(table, 2ull * c->pos_size * c->hidden_size),
                                                        c->patches, c->hidden_size, c->pos_size, c->patches_x));
}

double c_oracle_audio_error(const vkattn_audio_params* c, const float* q, const float* k, const float* v,
                            const float* per_dim_scale, const float* rel_pos, const float* got) {
  const vkattn::AudioAttentionParams p = vkattn::capi::audio_params_of(*c);
  const uint64_t n = uint64_t{p.frames} * p.num_heads * p.head_dim;
  const uint64_t nr = uint64_t{p.max_past + p.max_future + 1} * p.num_heads * p.head_dim;
  return error_of(got, vkattn::reference::audio_attention(p, span_of(q, n), span_of(k, n), span_of(v, n),
                                                          span_of(per_dim_scale, p.head_dim), span_of(rel_pos, nr)));
}

}  // extern "C"

#include "c_oracle.h"

#include <span>

#include "capi/capi_params.hpp"
#include "reference/audio_reference.hpp"
#include "reference/text_reference.hpp"
#include "reference/tolerance.hpp"
#include "reference/vision_reference.hpp"

namespace {

double error_of(const float* got, const std::vector<double>& want) {
  return vkattn::reference::max_relative_error(std::span<const float>(got, want.size()), want);
}

std::span<const float> span_of(const float* x, uint64_t n) { return {x, n}; }

}  // namespace

extern "C" {

double c_oracle_tolerance_f32(void) {
  using vkattn::DType;
  return vkattn::reference::tolerance_for(DType::f32, DType::f32, DType::f32).abs_rel;
}

double c_oracle_text_error(const vkattn_text_params* c, const float* q, const float* k, const float* v,
                           const float* got) {
  const vkattn::TextAttentionParams p = vkattn::capi::text_params_of(*c);
  const uint64_t nq = uint64_t{p.batch} * p.seq_len * p.num_heads * p.head_dim;
  const uint64_t nk = uint64_t{p.batch} * p.kv_capacity * p.num_kv_heads * p.head_dim;
  return error_of(got, vkattn::reference::text_attention(p, span_of(q, nq), span_of(k, nk), span_of(v, nk)));
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

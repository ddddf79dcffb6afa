/* The float64 oracle (src/reference) seen from C, for the C API test: each
 * returns max|got - oracle| / max|oracle| for the call and writes the f32
 * tolerance, so the test in C judges the GPU result as every other test does. */
#ifndef VKATTN_C_ORACLE_H
#define VKATTN_C_ORACLE_H

#include <stddef.h>
#include <stdint.h>

#include "vkattn/vkattn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The tolerance of a call whose Q, K/V and output are stored in these dtypes. */
double c_oracle_tolerance(vkattn_dtype q, vkattn_dtype kv, vkattn_dtype out);
/* Rounds n values in place to what an f16 tensor holds. */
void c_oracle_round_f16(float* x, size_t n);
/* Contiguous KV, or tiered over a contiguous cold tier k, v with the hot ring
 * hot_k, hot_v [B, hot_window, Hkv, D] (NULL unless tiered). */
double c_oracle_text_error(const vkattn_text_params* p, const float* q, const float* k, const float* v,
                           const float* hot_k, const float* hot_v, const float* got);
double c_oracle_vision_error(const vkattn_vision_params* p, const float* q, const float* k, const float* v,
                             const float* got);
double c_oracle_pos_embed_error(const vkattn_pos_embed_params* p, const float* hidden, const float* table,
                                const float* got);
double c_oracle_audio_error(const vkattn_audio_params* p, const float* q, const float* k, const float* v,
                            const float* per_dim_scale, const float* rel_pos, const float* got);

/* A BDPA cache as downloaded (see vkattn/bdpa.hpp; residuals are the i8
 * tensors' bytes, which are their values in order). */
typedef struct c_bdpa_cache {
  const float *basis_k, *basis_v;
  const int8_t *residual_k, *residual_v;
  const float *scale_k, *scale_v;
  const uint32_t* index;
} c_bdpa_cache;
/* Over the cache as the kernel reads it; rope_cos/sin [rope_positions, rotary_dim / 2]. */
double c_oracle_bdpa_error(const vkattn_bdpa_params* p, const float* q, const c_bdpa_cache* cache,
                           const float* rope_cos, const float* rope_sin, const float* got);
/* End to end: against the contiguous pre-RoPE cache k, v [B, kv_capacity, Hkv, D] the cache was built
 * from, unquantized (judged within c_oracle_tolerance(q, VKATTN_I8, out)). */
double c_oracle_bdpa_unquantized_error(const vkattn_bdpa_params* p, const float* q, const float* k, const float* v,
                                       const float* rope_cos, const float* rope_sin, const float* got);

#ifdef __cplusplus
}
#endif

#endif

/* The float64 oracle (src/reference) seen from C, for the C API test: each
 * returns max|got - oracle| / max|oracle| for the call and writes the f32
 * tolerance, so the test in C judges the GPU result as every other test does. */
#ifndef VKATTN_C_ORACLE_H
#define VKATTN_C_ORACLE_H

#include "vkattn/vkattn.h"

#ifdef __cplusplus
extern "C" {
#endif

double c_oracle_tolerance_f32(void);
/* Contiguous KV. */
double c_oracle_text_error(const vkattn_text_params* p, const float* q, const float* k, const float* v,
                           const float* got);
double c_oracle_vision_error(const vkattn_vision_params* p, const float* q, const float* k, const float* v,
                             const float* got);
double c_oracle_pos_embed_error(const vkattn_pos_embed_params* p, const float* hidden, const float* table,
                                const float* got);
double c_oracle_audio_error(const vkattn_audio_params* p, const float* q, const float* k, const float* v,
                            const float* per_dim_scale, const float* rel_pos, const float* got);

#ifdef __cplusplus
}
#endif

#endif

#include "c_check.h"

#include <stdlib.h>
#include <string.h>

#include "c_oracle.h"

int c_check_failures = 0;

static uint32_t rng_state = 12345u;
static float next_random(void) { /* uniform in [-1, 1) */
  rng_state = rng_state * 1664525u + 1013904223u;
  return (float)(rng_state >> 8) / (float)(1u << 23) - 1.0f;
}

float* random_floats(size_t n, float scale) {
  float* x = malloc(n * sizeof *x);
  for (size_t i = 0; i < n; ++i) x[i] = scale * next_random();
  return x;
}

vkattn_tensor tensor_from(vkattn_context ctx, vkattn_dtype dtype, const uint64_t* shape, uint32_t rank,
                          const void* data, size_t bytes) {
  vkattn_tensor t = NULL;
  CHECK_OK(vkattn_tensor_create(ctx, dtype, shape, rank, &t));
  if (t && data) CHECK_OK(vkattn_upload(ctx, t, data, bytes));
  return t;
}

vkattn_tensor tensor_with(vkattn_context ctx, const uint64_t* shape, uint32_t rank, const float* data, size_t n) {
  return tensor_from(ctx, VKATTN_F32, shape, rank, data, n * sizeof(float));
}

void* download(vkattn_context ctx, vkattn_tensor t) {
  const size_t bytes = vkattn_tensor_bytes(t);
  void* out = calloc(bytes ? bytes : 1, 1);
  CHECK_OK(vkattn_download(ctx, t, out, bytes));
  return out;
}

void release(void** arrays, vkattn_tensor* tensors) {
  for (; *arrays; ++arrays) free(*arrays);
  for (; *tensors; ++tensors) vkattn_tensor_destroy(*tensors);
}

c_text_case c_text_case_make(void) {
  static const uint32_t kv_len = 40, start_pos = 36;
  c_text_case c;
  memset(&c, 0, sizeof c);
  vkattn_text_params* p = &c.params;
  p->batch = 1;
  p->seq_len = 4;
  p->num_heads = 4;
  p->num_kv_heads = 2;
  p->head_dim = 32;
  p->causal = 1;
  p->kv_capacity = 40;
  p->kv_len = &kv_len;
  p->kv_len_count = 1;
  p->start_pos = &start_pos;
  p->start_pos_count = 1;
  const uint64_t qs[4] = {1, 4, 4, 32}, ks[4] = {1, 40, 2, 32};
  memcpy(c.q_shape, qs, sizeof qs);
  memcpy(c.kv_shape, ks, sizeof ks);
  c.nq = 4 * 4 * 32;
  c.nk = 40 * 2 * 32;
  c.q = random_floats(c.nq, 2.0f);
  c.k = random_floats(c.nk, 2.0f);
  c.v = random_floats(c.nk, 1.0f);
  return c;
}

void c_text_case_free(c_text_case* c) {
  free(c->q);
  free(c->k);
  free(c->v);
}

void check_error_within(const char* what, double err, double tolerance) {
  CHECK(err <= tolerance, "%s: error %.3g against the oracle, tolerance %.3g", what, err, tolerance);
  printf("%-12s max relative error %.2e (tolerance %.1e)\n", what, err, tolerance);
}

void check_error(const char* what, double err) {
  check_error_within(what, err, c_oracle_tolerance(VKATTN_F32, VKATTN_F32, VKATTN_F32));
}

int run_checks(vkattn_context ctx, const c_check_fn* checks) {
  vkattn_recorder rec = NULL;
  CHECK_OK(vkattn_recorder_create(ctx, &rec));
  for (; rec && *checks; ++checks) {
    (*checks)(ctx, rec);
    CHECK_OK(vkattn_recorder_reset(rec));
  }
  vkattn_recorder_destroy(rec);
  printf("%s\n", c_check_failures ? "FAILED" : "all checks passed");
  return c_check_failures ? 1 : 0;
}

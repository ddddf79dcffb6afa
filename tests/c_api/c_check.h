/* What the C tests share: a failure count, CHECK macros that report and count,
 * reproducible random inputs, tensors made from and read into host arrays,
 * the text call they all run, and the verdict against the float64 oracle. */
#ifndef VKATTN_C_CHECK_H
#define VKATTN_C_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "vkattn/vkattn.h"

extern int c_check_failures;

#define CHECK(cond, ...)                                          \
  do {                                                            \
    if (!(cond)) {                                                \
      fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                               \
      fprintf(stderr, "\n");                                      \
      ++c_check_failures;                                         \
    }                                                             \
  } while (0)

#define CHECK_OK(call) CHECK((call) == VKATTN_OK, "%s", vkattn_last_error())
/* A failing call whose status is `status` and whose message holds `text`. */
#define CHECK_FAILS(call, status, text)                                                               \
  do {                                                                                                \
    const vkattn_status got_status_ = (call);                                                         \
    CHECK(got_status_ == (status) && strstr(vkattn_last_error(), (text)) != NULL,                     \
          "expected status %d with '%s', got %d: %s", (int)(status), (text), (int)got_status_,          \
          vkattn_last_error());                                                                       \
  } while (0)

/* n floats uniform in [-scale, scale), from one fixed sequence; free() them. */
float* random_floats(size_t n, float scale);

/* A new tensor of `dtype` and `shape`, holding `bytes` bytes of `data` (NULL: uninitialised). */
vkattn_tensor tensor_from(vkattn_context ctx, vkattn_dtype dtype, const uint64_t* shape, uint32_t rank,
                          const void* data, size_t bytes);
/* The same for n f32 values. */
vkattn_tensor tensor_with(vkattn_context ctx, const uint64_t* shape, uint32_t rank, const float* data, size_t n);
/* A tensor's bytes in a new host array; free() it. */
void* download(vkattn_context ctx, vkattn_tensor t);
/* Frees what a check allocated: host arrays, then tensors (NULL-terminated lists). */
void release(void** arrays, vkattn_tensor* tensors);

/* The text call every C test runs: 4 queries at positions 36..39 over 40
 * contiguous keys, 4 heads over 2 KV heads of 32, causal; random Q, K, V. */
typedef struct c_text_case {
  vkattn_text_params params; /* its kv_len and start_pos point at static values */
  uint64_t q_shape[4], kv_shape[4];
  size_t nq, nk;
  float *q, *k, *v;
} c_text_case;
c_text_case c_text_case_make(void);
void c_text_case_free(c_text_case* c);

/* One check of a C test program: its calls on ctx, recorded with rec. */
typedef void (*c_check_fn)(vkattn_context ctx, vkattn_recorder rec);
/* Runs the checks (NULL-terminated) on one recorder, reset between them, and
 * prints the verdict: the program's exit status, 0 when every check passed. */
int run_checks(vkattn_context ctx, const c_check_fn* checks);

/* Fails the check when `err` (relative to the oracle) is past `tolerance`; prints it. */
void check_error_within(const char* what, double err, double tolerance);
/* The same at the f32 tolerance. */
void check_error(const char* what, double err);

#endif

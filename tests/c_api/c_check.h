/* What the C tests share: a failure count, CHECK macros that report and count,
 * reproducible random inputs, and the verdict against the float64 oracle. */
#ifndef VKATTN_C_CHECK_H
#define VKATTN_C_CHECK_H

#include <stddef.h>
#include <stdio.h>

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

/* n floats uniform in [-scale, scale), from one fixed sequence; free() them. */
float* random_floats(size_t n, float scale);
/* Fails the check when `err` (relative to the oracle) is past the f32 tolerance; prints it. */
void check_error(const char* what, double err);

#endif

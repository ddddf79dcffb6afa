#include "c_check.h"

#include <stdint.h>
#include <stdlib.h>

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

void check_error(const char* what, double err) {
  const double tol = c_oracle_tolerance_f32();
  CHECK(err <= tol, "%s: error %.3g against the oracle, tolerance %.3g", what, err, tol);
  printf("%-10s max relative error %.2e (tolerance %.1e)\n", what, err, tol);
}

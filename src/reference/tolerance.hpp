// How close a GPU result must be to the float64 oracle (DESIGN.md §4): the
// largest absolute error, relative to the largest |reference| value.
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "vkattn/types.hpp"

namespace vkattn::reference {

struct Tolerance {
  // Allowed max_i |got_i - want_i| / max_i |want_i|.
  double abs_rel = 0.0;
};

// Tolerance for a call whose Q, KV and output are stored in these dtypes: the
// loosest of the three (f32 2e-5, f16 4e-3, bf16 2.5e-2, i8 KV 3e-2, i4 KV
// 0.25). u32 is not a value dtype and throws Error naming the parameter.
Tolerance tolerance_for(DType q, DType kv, DType out);

// max_i |got_i - want_i| / max(max_i |want_i|, 1e-30); +inf if got holds a
// NaN or Inf. Sizes must match (Error naming "got").
double max_relative_error(std::span<const float> got, std::span<const double> want);

struct CompareResult {
  double max_abs_err = 0.0;  // max_i |got_i - want_i|
  double max_ref = 0.0;      // max_i |want_i|
  double rel_err = 0.0;      // max_abs_err / max(max_ref, 1e-30); +inf on an unmatched NaN or Inf
  bool passed = true;        // rel_err <= tolerance and no unmatched NaN or Inf
  size_t worst_index = 0;    // index of the largest error, or of the first non-finite got_i
  double got_at_worst = 0.0;
  double want_at_worst = 0.0;
};

// Compares element-wise. NaN in both, or the same infinity in both, matches
// (the caller's NaN/Inf propagated as the oracle says); any other NaN or Inf
// in `got` (or in `want`) fails.
CompareResult compare(std::span<const float> got, std::span<const double> want, Tolerance tol);

// One line for test failure messages: errors, tolerance and the worst element.
std::string to_string(const CompareResult& r, Tolerance tol);

}  // namespace vkattn::reference

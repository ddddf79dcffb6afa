#include "reference/tolerance.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "vkattn/error.hpp"

namespace vkattn::reference {

namespace {

constexpr double kTinyRef = 1e-30;  // keeps an all-zero reference from dividing by zero

double dtype_tolerance(DType t, const char* param) {
  switch (t) {
    case DType::f32: return 2e-5;
    case DType::f16: return 4e-3;
    case DType::bf16: return 2.5e-2;
    case DType::i8: return 3e-2;
    case DType::i4: return 0.25;
    case DType::u32: break;
  }
  throw Error(ErrorKind::invalid_argument,
              fmt::format("{}: expected f32, f16, bf16, i8 or i4, got {}", param, to_string(t)));
}

void require_same_size(std::span<const float> got, std::span<const double> want) {
  if (got.size() != want.size())
    throw Error(ErrorKind::invalid_argument,
                fmt::format("got: expected {} elements (the reference's), got {}", want.size(), got.size()));
}

}  // namespace

Tolerance tolerance_for(DType q, DType kv, DType out) {
  return Tolerance{std::max({dtype_tolerance(q, "q dtype"), dtype_tolerance(kv, "kv dtype"),
                             dtype_tolerance(out, "out dtype")})};
}

double max_relative_error(std::span<const float> got, std::span<const double> want) {
  return compare(got, want, Tolerance{0.0}).rel_err;
}

CompareResult compare(std::span<const float> got, std::span<const double> want, Tolerance tol) {
  require_same_size(got, want);
  CompareResult r;
  bool finite = true;
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], w = want[i];
    // NaN where the oracle has NaN (the caller's NaN/Inf propagated), or the same infinity, is a match.
    if ((std::isnan(g) && std::isnan(w)) || (std::isinf(g) && g == w)) continue;
    r.max_ref = std::max(r.max_ref, std::abs(w));
    if (!std::isfinite(g) || !std::isfinite(w)) {
      if (finite) {  // report the first non-finite element
        finite = false;
        r.worst_index = i;
        r.got_at_worst = g;
        r.want_at_worst = w;
      }
      continue;
    }
    const double err = std::abs(g - w);
    if (finite && err > r.max_abs_err) {
      r.worst_index = i;
      r.got_at_worst = g;
      r.want_at_worst = w;
    }
    r.max_abs_err = std::max(r.max_abs_err, err);
  }
  if (!finite) {
    r.rel_err = std::numeric_limits<double>::infinity();  // fails every `<= tol` check
    r.passed = false;
    return r;
  }
  r.rel_err = r.max_abs_err / std::max(r.max_ref, kTinyRef);
  r.passed = r.rel_err <= tol.abs_rel;
  return r;
}

std::string to_string(const CompareResult& r, Tolerance tol) {
  return fmt::format("{}: rel_err {:.3g} (tolerance {:.3g}), max_abs_err {:.3g}, max|ref| {:.3g}; "
                     "worst at [{}]: got {}, want {}",
                     r.passed ? "passed" : "FAILED", r.rel_err, tol.abs_rel, r.max_abs_err, r.max_ref,
                     r.worst_index, r.got_at_worst, r.want_at_worst);
}

}  // namespace vkattn::reference

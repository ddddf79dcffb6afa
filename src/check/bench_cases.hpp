// Benchmark shapes: the same case type as the tests, at model sizes.
#pragma once

#include <string>
#include <vector>

#include "check/text_cases.hpp"

namespace vkattn::check {

struct BenchCase {
  std::string suite;  // decode | prefill
  TextCase text;
  bool oracle = true;  // small enough for the CPU oracle
};

std::vector<BenchCase> text_bench_cases();

}  // namespace vkattn::check

// Output of `vkattn bench`: one JSON object per case (the single source of
// every reported field), printed as a table, JSON lines or CSV.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "check/bench_run.hpp"
#include "vkattn/caps.hpp"

namespace vkattn::cli {

using OrderedJson = nlohmann::ordered_json;

// The ceilings shares are computed against, and where they came from:
// "measured" (a probe in this run), "measured (FILE)" (--ceilings), "table"
// (the known-device table) or "none".
struct Ceilings {
  double read_gbps = 0.0;
  double fp16_tflops = 0.0;
  std::string source = "none";
};

OrderedJson bench_row(const std::string& suite, const check::BenchSpec& spec, const check::BenchRecord& r,
                      const Ceilings& ceilings);

enum class BenchFormat { table, json, csv };

class BenchPrinter {
 public:
  explicit BenchPrinter(BenchFormat format) : format_(format) {}
  void header(const DeviceCaps& caps, const check::BenchSuite& suite, size_t cases);
  void row(const OrderedJson& row);
  // The counts by status and the ceilings used.
  void summary(const DeviceCaps& caps, const std::string& suite, const Ceilings& ceilings);

 private:
  BenchFormat format_;
  size_t ok_ = 0, skipped_ = 0, failed_ = 0, errors_ = 0;
};

}  // namespace vkattn::cli

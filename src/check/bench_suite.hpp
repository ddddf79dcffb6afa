// Benchmark suites as data: a JSON file lists single cases and grids (lists
// per axis, expanded as their product) of text, vision, audio, BDPA and probe
// cases. Loading is pure (no device), so bad files are tested anywhere.
//
//   {"suite": "decode", "description": "...",
//    "defaults": {"family": "text", "q_dtype": "f16", "kv_dtype": "f16"},
//    "grids": [{"fields": {"seq_len": 1},
//               "axes": {"batch": [1, 8],                        // a scalar sets the field named by the axis
//                        "heads": [{"heads": 32, "kv_heads": 8}]}}],  // an object sets several fields
//    "cases": [{"label": "llama3-8b", "batch": 1, "heads": 32, ...}]}
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "check/audio_cases.hpp"
#include "check/bdpa_cases.hpp"
#include "check/text_cases.hpp"
#include "check/vision_cases.hpp"

namespace vkattn::check {

enum class BenchFamily { text, vision, audio, bdpa, probe };
std::string_view to_string(BenchFamily f);

enum class ProbeKind { read_bandwidth, coopmat_fp16, dispatch_floor };
std::string_view to_string(ProbeKind k);

struct ProbeSpec {
  ProbeKind kind = ProbeKind::read_bandwidth;
  uint64_t bytes = 1ull << 30;   // read probe: bytes streamed
  uint32_t workgroups = 0;       // coopmat probe: subgroups launched (0: 64 per compute unit)
  uint32_t iterations = 4096;    // coopmat probe: multiply-adds per accumulator
};

// One benchmark case; `family` says which of the members applies.
struct BenchSpec {
  std::string name;    // unique in its suite
  BenchFamily family = BenchFamily::text;
  TextCase text;       // paged: kv_capacity is the page size, pages cover kv_len
  VisionCase vision;
  AudioCase audio;
  BdpaCase bdpa;       // kv_capacity = kv_len; queries are the last seq_len positions
  ProbeSpec probe;
};

struct BenchSuite {
  std::string name;
  std::string description;
  std::string source;  // the file it was read from
  std::vector<BenchSpec> cases;
};

// Parses and expands a suite; throws Error (invalid_argument) naming the
// file, the field's place (e.g. "grids[0].axes.batch[2]"), the expected and
// the actual value.
BenchSuite parse_bench_suite(const std::string& json_text, const std::string& source);
BenchSuite load_bench_suite_file(const std::string& path);

// Where suites named without a path are looked up, in order:
// $VKATTN_BENCH_SUITES, then bench/suites beside or above the running binary
// (source tree) and share/vkattn/bench/suites (installed).
std::vector<std::filesystem::path> bench_suite_dirs();
// A path (contains '/' or ends in .json) is read as is; a name is looked up
// in bench_suite_dirs() (Error listing the suites found when none matches).
BenchSuite find_bench_suite(const std::string& name_or_path);

// The text case a command line or suite describes (batch, seq_len, ...):
// queries are the last seq_len positions of kv_len keys; paged pages hold
// page_size keys, in a shuffled order.
TextCase make_text_bench_case(uint32_t batch, uint32_t seq_len, uint32_t heads, uint32_t kv_heads,
                              uint32_t head_dim, uint32_t kv_len, KvLayout layout, uint32_t page_size);
// "B1 S1 H32/8 D128 L4096 contiguous f16/f16" (+ " ps16", " w4096", " causal", " softcap30")
std::string text_bench_name(const TextCase& c);

}  // namespace vkattn::check

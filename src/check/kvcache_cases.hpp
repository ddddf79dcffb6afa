// Cases of the kvcache family: new tokens written by kv_append into a
// contiguous, ring, paged or tiered cache (f32/f16/bf16/int8/int4; tiered: an
// f16 hot ring and a contiguous or paged cold tier), the cache checked
// element by element against the host reference, then text attention over it
// checked twice: against the float64 oracle over the values the kernel reads
// (the usual tolerance) and, for quantized caches, against the unquantized
// data within the bound of reference::quant_attention_bound.
#pragma once

#include <string>
#include <vector>

#include "check/check_case.hpp"
#include "vkattn/context.hpp"
#include "vkattn/text.hpp"

namespace vkattn::check {

struct KvCacheCase {
  KvLayout layout = KvLayout::contiguous;
  KvLayout cold_layout = KvLayout::contiguous;  // tiered: the cold tier's layout (capacity and max_pages are its)
  uint32_t hot_window = 0;                      // tiered: slots of the f16 hot ring
  uint32_t batch = 1, num_heads = 2, num_kv_heads = 1, head_dim = 32;
  uint32_t capacity = 48;            // contiguous/ring slots, or the page size
  uint32_t max_pages = 0;            // paged: pages per sequence (the pool holds batch x max_pages)
  uint32_t length = 40;              // tokens written per sequence: a prefill chunk of length - 1, then one decode token
  uint32_t seq_len = 1;              // query rows of the attention call (1: decode)
  DType src = DType::f32, cache = DType::i8, q = DType::f32;
  uint32_t quant_group = 0;
  bool gpu_positions = false;        // the decode token's positions from a u32 GPU buffer
  std::string variant;               // forced (strict); empty: the planner decides
  uint32_t seed = 7;
};

struct KvCacheResult {
  CheckResult exact;                 // attention vs the oracle over the values the kernel reads
  std::string append_error;          // empty: every written element as the reference says
  double e2e_err = 0.0;              // quantized: max |attention - oracle over unquantized data|
  double e2e_bound = 0.0;            // ... and what the quantization bound allows
  bool passed() const { return exact.passed && append_error.empty() && e2e_err <= e2e_bound; }
};

std::string describe(const KvCacheCase& c);
KvCacheResult run_kvcache_case(Context& ctx, const KvCacheCase& c);
// Layouts x engines x dtypes x scale groups, small enough for lavapipe.
std::vector<KvCacheCase> kvcache_grid(const DeviceCaps& caps, GridSize size);

std::vector<CheckCase> kvcache_check_cases(const DeviceCaps& caps, GridSize size);
std::vector<CheckCase> kvcache_demo_cases(DemoSize size);

}  // namespace vkattn::check

// Shared by the benchmark shaders (bench_fill.comp, bench_read.comp,
// bench_coopmat.comp) and src/check/bench_probes.cpp: bindings, workgroup
// sizes, push-constant layouts and the fill pattern, declared once.
#ifndef VKATTN_BENCH_INTERFACE_H
#define VKATTN_BENCH_INTERFACE_H

#include "dtype_interface.h"

// ---- bench_fill.comp: words[i] = the pattern's elements of word i ----
#define BENCH_FILL_SC_TYPE 0
#define BENCH_FILL_WG 256
#define BENCH_FILL_BIND_DST 0
#define BENCH_FILL_BINDINGS 1

// The pattern: element i of a tensor filled with `seed` is
//   (int(hash(i ^ (seed * BENCH_SEED_MUL)) >> 24) - 128) / BENCH_VALUE_DIV,
// a multiple of 1/64 in [-2, 2): exact in f32, f16 and bf16, so the host
// knows every stored value without reading the tensor back. hash is
// Wellons' lowbias32 (two multiply-xorshift rounds).
#define BENCH_SEED_MUL 0x9E3779B9u
#define BENCH_HASH_MUL1 0x7feb352du
#define BENCH_HASH_MUL2 0x846ca68bu
#define BENCH_VALUE_DIV 64.0

// ---- bench_read.comp: sum of every u32 word (mod 2^32) into result[0] ----
#define BENCH_READ_WG 256
#define BENCH_READ_UNROLL 4   // uvec4 loads in flight per invocation and step
#define BENCH_READ_BIND_SRC 0
#define BENCH_READ_BIND_RESULT 1
#define BENCH_READ_BINDINGS 2

// ---- bench_coopmat.comp: fp16 x fp16 -> fp32 multiply-adds on subgroup matrices ----
#define BENCH_COOP_M 16
#define BENCH_COOP_N 16
#define BENCH_COOP_K 16
#define BENCH_COOP_ACCUMULATORS 8  // independent chains, so the tensor cores never wait on one result
#define BENCH_COOP_SC_SUBGROUP_SIZE 0  // invocations per workgroup: one subgroup
#define BENCH_COOP_BIND_AB 0       // A then B, row-major f16 M x K and K x N
#define BENCH_COOP_BIND_OUT 1      // one f32 M x N tile per subgroup
#define BENCH_COOP_BINDINGS 2

#ifdef __cplusplus
#include <cstdint>
namespace vkattn::bench {
using uint = uint32_t;
struct BenchPush {
#else
layout(push_constant) uniform BenchPush {
#endif
  uint count;  // fill: u32 words to write; read: uvec4 words to read; coopmat: multiply-adds per accumulator
  uint seed;   // fill: the pattern's seed; unused otherwise
}
#ifdef __cplusplus
;
static_assert(sizeof(BenchPush) == 8);
}  // namespace vkattn::bench
#else
pc;
#endif

#endif

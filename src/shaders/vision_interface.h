// Shared by the vision shaders (vision_attention.comp, vision_transpose.comp,
// posembed.comp) and src/ops/vision/*.cpp: specialization-constant ids, enum
// codes, bindings and push-constant layouts, declared once.
#ifndef VKATTN_VISION_INTERFACE_H
#define VKATTN_VISION_INTERFACE_H

#include "dtype_interface.h"

// ---- vision_attention.comp ----
#define VIS_SC_HEAD_DIM 0     // D, a multiple of 8
#define VIS_SC_WG_SIZE 1      // invocations per workgroup
#define VIS_SC_QUERIES 2      // queries (patches) per workgroup, all of one head
#define VIS_SC_TILE 3         // keys staged in shared memory per step
#define VIS_SC_IN_TYPE 4      // DTYPE_* of Q, K, V
#define VIS_SC_OUT_TYPE 5     // DTYPE_* of the output
#define VIS_SC_LAYOUT 6       // VIS_LAYOUT_* of Q, K, V and the output
#define VIS_SC_KIND 7         // VIS_KIND_*
#define VIS_SC_F16_SHARED 8   // 1: K/V tiles packed as f16 pairs in uint shared arrays
#define VIS_SC_ACC_CHUNKS 9   // vec4 accumulators per invocation = ceil(QUERIES*D/4 / WG)
#define VIS_SC_COUNT 10

#define VIS_LAYOUT_PHD 0      // [P, H, D]
#define VIS_LAYOUT_HPD 1      // [H, P, D]

#define VIS_KIND_REFERENCE 0  // one invocation per (patch, head), K/V straight from memory
#define VIS_KIND_FLASH 1      // K/V tiles in shared memory, online softmax

#define VIS_BIND_Q 0
#define VIS_BIND_K 1
#define VIS_BIND_V 2
#define VIS_BIND_O 3
#define VIS_BINDINGS 4

// ---- vision_transpose.comp: [A, B, W words] -> [B, A, W words] ----
#define VIS_TRANSPOSE_WG 64
#define VIS_TRANSPOSE_BIND_SRC 0
#define VIS_TRANSPOSE_BIND_DST 1
#define VIS_TRANSPOSE_BINDINGS 2

// ---- posembed.comp: hidden[p, d] += table[0, p % px, d] + table[1, p / px, d] ----
#define POSEMBED_SC_TYPE 0    // DTYPE_* of hidden and table
#define POSEMBED_WG 64
#define POSEMBED_BIND_HIDDEN 0
#define POSEMBED_BIND_TABLE 1
#define POSEMBED_BINDINGS 2

#ifdef __cplusplus
#include <cstdint>
namespace vkattn::vision {
using uint = uint32_t;
#define VIS_PUSH_STRUCT(name) struct name
#else
#define VIS_PUSH_STRUCT(name) layout(push_constant) uniform name
#endif

#if defined(__cplusplus) || defined(VIS_ATTENTION_PUSH)
VIS_PUSH_STRUCT(VisionPush) {
  uint patches;
  uint heads;
  float scale;
  uint pad0;
}
#ifdef __cplusplus
;
#else
pc;
#endif
#endif

#if defined(__cplusplus) || defined(VIS_TRANSPOSE_PUSH)
VIS_PUSH_STRUCT(TransposePush) {
  uint rows_a;     // A
  uint rows_b;     // B
  uint words;      // W: uvec4 words per row
  uint pad0;
}
#ifdef __cplusplus
;
#else
pc;
#endif
#endif

#if defined(__cplusplus) || defined(POSEMBED_PUSH)
VIS_PUSH_STRUCT(PosEmbedPush) {
  uint patches;
  uint hidden_words;  // uint words per hidden row
  uint pos_size;
  uint patches_x;
}
#ifdef __cplusplus
;
#else
pc;
#endif
#endif

#ifdef __cplusplus
}  // namespace vkattn::vision
#endif

#endif

// Shared by audio_attention.comp and src/ops/audio/*.cpp: specialization-constant
// ids, bindings and push-constant layout of the Conformer block-local attention.
#ifndef VKATTN_AUDIO_INTERFACE_H
#define VKATTN_AUDIO_INTERFACE_H

#include "dtype_interface.h"

#define AUDIO_SC_HEAD_DIM 0    // D, a multiple of 8
#define AUDIO_SC_WG_SIZE 1
#define AUDIO_SC_TILE 2        // keys scored per step
#define AUDIO_SC_IN_TYPE 3     // DTYPE_* of Q, K, V and rel_pos
#define AUDIO_SC_OUT_TYPE 4
#define AUDIO_SC_ACC_CHUNKS 5  // vec4 accumulators per invocation = ceil(D/4 / WG)
#define AUDIO_SC_COUNT 6

#define AUDIO_BIND_Q 0
#define AUDIO_BIND_K 1
#define AUDIO_BIND_V 2
#define AUDIO_BIND_PER_DIM_SCALE 3  // f32 [D], raw (softplus applied in the kernel)
#define AUDIO_BIND_REL_POS 4        // [P + F + 1, H, D]
#define AUDIO_BIND_O 5
#define AUDIO_BINDINGS 6

#ifdef __cplusplus
#include <cstdint>
namespace vkattn::audio {
using uint = uint32_t;
#define AUDIO_PUSH_STRUCT struct AudioPush
#else
#define AUDIO_PUSH_STRUCT layout(push_constant) uniform AudioPush
#endif

AUDIO_PUSH_STRUCT {
  uint frames;      // T
  uint heads;       // H
  uint chunk;       // W
  uint max_past;    // P
  uint max_future;  // F
  int past_reach;   // largest visible t_q - t_k: P (include_past_edge) or P - 1
  float logit_cap;  // 0: none
  float q_base;     // D^-1/2 / ln 2
  float k_factor;   // ln(1 + e) / ln 2 (scale_keys) or 1
  uint pad0;
  uint pad1;
  uint pad2;
}
#ifdef __cplusplus
;
}  // namespace vkattn::audio
#else
pc;
#endif

#endif

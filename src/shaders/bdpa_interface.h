// Shared by bdpa_attention.comp, bdpa_build.comp and src/ops/bdpa/*.cpp:
// specialization-constant ids, bindings, push constants and the numbers of
// the BDPA cache format, declared once. Element dtype codes are DTYPE_*
// (text_attention_interface.h), which the BDPA kernels share with text attention.
#ifndef VKATTN_BDPA_INTERFACE_H
#define VKATTN_BDPA_INTERFACE_H

// An index entry is BDPA_INDEX_WORDS u32: (basis row, residual row, original position).
#define BDPA_INDEX_WORDS 3
#define BDPA_INDEX_BASIS 0
#define BDPA_INDEX_RESIDUAL 1
#define BDPA_INDEX_POSITION 2
// Residuals are int8, BDPA_RESIDUAL_LANES per u32 word (little-endian, two's
// complement), quantized with scale = absmax / BDPA_RESIDUAL_QMAX per (row, KV head).
#define BDPA_RESIDUAL_LANES 4
#define BDPA_RESIDUAL_QMAX 127
// Marks "no such row" in the builder's scratch tables and in index entries it skips.
#define BDPA_NONE 0xffffffffu

#define BDPA_ROPE_ROTATE_HALF 0  // element i pairs with i + rotary_dim/2
#define BDPA_ROPE_INTERLEAVED 1  // element 2i pairs with 2i + 1

// bdpa_attention.comp specialization constants.
#define BDPA_SC_HEAD_DIM 0
#define BDPA_SC_WG_SIZE 1
#define BDPA_SC_Q_POS 2       // query positions per workgroup
#define BDPA_SC_HEAD_GROUP 3  // query heads per workgroup, all sharing one KV head
#define BDPA_SC_TILE_KEYS 4   // keys rebuilt into shared memory per step
#define BDPA_SC_Q_TYPE 5      // DTYPE_*
#define BDPA_SC_BASIS_TYPE 6  // DTYPE_* of the basis rows
#define BDPA_SC_O_TYPE 7
#define BDPA_SC_SPLIT 8       // 1: write partials for text_split_reduce.comp
#define BDPA_SC_ACC_CHUNKS 9  // vec4 accumulators per invocation = ceil(rows * D/4 / WG)
#define BDPA_SC_PAIRING 10    // BDPA_ROPE_*
#define BDPA_SC_COUNT 11

// Shared memory of bdpa_attention.comp (its arrays, sized by these): the
// workgroup's query rows, the rebuilt K and V tiles (f32), scores and the
// per-key index entries and per-row softmax state.
#define BDPA_Q_VEC4S(rows, d) ((rows) * ((d) / 4))
#define BDPA_KV_VEC4S(tk, d) ((tk) * ((d) / 4))
#define BDPA_SHARED_BYTES(rows, d, tk) \
  (BDPA_Q_VEC4S(rows, d) * 16 + 2 * BDPA_KV_VEC4S(tk, d) * 16 + (rows) * (tk) * 4 + (tk) * 12 + (rows) * 16)

// bdpa_attention.comp bindings. The partials are f32 [B, splits, S, H, D] and
// [B, splits, S, H, 2] (running max, running sum): what text_split_reduce.comp
// reads, bound at its own numbers (TEXT_BIND_PARTIAL_*) for the reduce.
#define BDPA_BIND_Q 0
#define BDPA_BIND_O 1
#define BDPA_BIND_BASIS_K 2
#define BDPA_BIND_BASIS_V 3
#define BDPA_BIND_RESIDUAL_K 4
#define BDPA_BIND_RESIDUAL_V 5
#define BDPA_BIND_SCALE_K 6      // f32 [num_residual, Hkv]
#define BDPA_BIND_SCALE_V 7
#define BDPA_BIND_INDEX 8        // u32 [B, kv_capacity, BDPA_INDEX_WORDS]
#define BDPA_BIND_ROPE_COS 9     // f32 [rope_positions, rotary_dim / 2]
#define BDPA_BIND_ROPE_SIN 10
#define BDPA_BIND_KV_LEN 11
#define BDPA_BIND_START_POS 12
#define BDPA_BIND_PARTIAL_O 13
#define BDPA_BIND_PARTIAL_ML 14
#define BDPA_BINDINGS 15

#define BDPA_FLAG_CAUSAL 1u
#define BDPA_FLAG_KV_LEN_BUFFER 2u     // kv_len[b] from BDPA_BIND_KV_LEN
#define BDPA_FLAG_START_POS_BUFFER 4u  // start_pos[b] from BDPA_BIND_START_POS

// bdpa_build.comp: one module; BDPA_BUILD_SC_PASS picks the pass of each pipeline.
#define BDPA_BUILD_SC_PASS 0
#define BDPA_BUILD_SC_WG_SIZE 1
#define BDPA_BUILD_SC_HEAD_DIM 2
#define BDPA_BUILD_SC_KV_TYPE 3     // DTYPE_* of the contiguous input
#define BDPA_BUILD_SC_BASIS_TYPE 4  // DTYPE_* of the basis written
#define BDPA_BUILD_SC_COUNT 5

#define BDPA_PASS_LINK 0      // per position: push it onto its token's list
#define BDPA_PASS_SLOTS 1     // one workgroup: basis rows in token-id order (a scan over the vocabulary)
#define BDPA_PASS_BASIS 2     // per (basis row, KV head): the mean of the token's rows
#define BDPA_PASS_RESIDUAL 3  // per (position, KV head): int8 residual, its scale, the index entry

#define BDPA_BUILD_BIND_K 0          // [B, C, Hkv, D]
#define BDPA_BUILD_BIND_V 1
#define BDPA_BUILD_BIND_TOKENS 2     // u32 [B, C]
#define BDPA_BUILD_BIND_KV_LEN 3     // u32 [B]
#define BDPA_BUILD_BIND_HEAD 4       // scratch u32 [vocab]: last position pushed per token
#define BDPA_BUILD_BIND_LINK 5       // scratch u32 [B * C]: next position of the same token
#define BDPA_BUILD_BIND_SLOT 6       // scratch u32 [vocab]: basis row of each token
#define BDPA_BUILD_BIND_TOKEN_OF 7   // scratch u32 [B * C]: token of each basis row
#define BDPA_BUILD_BIND_NUM_BASIS 8  // u32 [1]: basis rows written
#define BDPA_BUILD_BIND_BASIS_K 9
#define BDPA_BUILD_BIND_BASIS_V 10
#define BDPA_BUILD_BIND_RESIDUAL_K 11
#define BDPA_BUILD_BIND_RESIDUAL_V 12
#define BDPA_BUILD_BIND_SCALE_K 13
#define BDPA_BUILD_BIND_SCALE_V 14
#define BDPA_BUILD_BIND_INDEX 15
#define BDPA_BUILD_BINDINGS 16

#ifdef __cplusplus
#include <cstdint>
namespace vkattn::bdpa {
using uint = uint32_t;
#define BDPA_PUSH_STRUCT(name) struct name
#define BDPA_PUSH_NAME
#else
#define BDPA_PUSH_STRUCT(name) layout(push_constant) uniform name
#define BDPA_PUSH_NAME pc
#endif

// GLSL declares one push block: a shader defines BDPA_BUILD_SHADER to get the builder's.
#if defined(__cplusplus) || !defined(BDPA_BUILD_SHADER)
BDPA_PUSH_STRUCT(BdpaPush) {
  uint batch;
  uint seq_len;
  uint num_heads;
  uint num_kv_heads;
  uint capacity;        // index entries per sequence
  uint num_basis;       // rows of basis_k / basis_v; entries past them are never followed
  uint num_residual;    // rows of the residual pools
  uint flags;           // BDPA_FLAG_*
  uint kv_len;          // used unless BDPA_FLAG_KV_LEN_BUFFER
  uint start_pos;       // used unless BDPA_FLAG_START_POS_BUFFER
  uint window;          // 0: none
  float scale;
  float softcap;        // 0: none
  uint num_splits;      // KV splits (1 unless BDPA_SC_SPLIT)
  uint rotary_dim;      // leading elements of each key rotated (0: no RoPE)
  uint rope_positions;  // rows of the cos/sin tables; entries at or past them are never followed
  // Element strides of dims 0-2 of q and out [B, S, H] (multiples of 8).
  uint q_strides[3];
  uint o_strides[3];
} BDPA_PUSH_NAME;
#endif
#if defined(__cplusplus) || defined(BDPA_BUILD_SHADER)
BDPA_PUSH_STRUCT(BdpaBuildPush) {
  uint batch;
  uint capacity;      // C: slots per sequence of the contiguous input
  uint num_kv_heads;
  uint vocab_size;    // token ids below it; other ids are skipped
  uint kv_len;        // used unless flags & BDPA_FLAG_KV_LEN_BUFFER
  uint flags;
  uint max_rows;      // B * C: basis and residual rows the outputs hold
  uint pad0;
} BDPA_PUSH_NAME;
#endif

#ifdef __cplusplus
static_assert(sizeof(BdpaPush) == 88, "BdpaPush: the shader's push-constant layout");
static_assert(sizeof(BdpaBuildPush) == 32, "BdpaBuildPush: the shader's push-constant layout");
}  // namespace vkattn::bdpa
#endif


#endif

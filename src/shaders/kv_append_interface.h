// Shared by kv_append.comp and src/ops/kvcache/kv_append.cpp: specialization
// constants, bindings and push constants of the KV-cache write. Dtype and
// layout codes are the text kernels' (DTYPE_*, TEXT_LAYOUT_*).
#ifndef VKATTN_KV_APPEND_INTERFACE_H
#define VKATTN_KV_APPEND_INTERFACE_H

#define KVA_SC_HEAD_DIM 0
#define KVA_SC_SRC_TYPE 1  // DTYPE_F32/F16/BF16
#define KVA_SC_DST_TYPE 2  // DTYPE_F32/F16/BF16/INT8/INT4
#define KVA_SC_LAYOUT 3    // TEXT_LAYOUT_CONTIGUOUS/RING/PAGED: the slots (a tiered cache's cold tier)
#define KVA_SC_GROUP 4     // quantized: KV_QUANT_GROUP_ROW or KV_QUANT_GROUP
#define KVA_SC_HOT_RING 5  // 1: tiered, each token also goes to the f16 hot ring
#define KVA_SC_COUNT 6

// One workgroup per (new token, KV head, sequence); invocation u owns elements
// 8u..8u+7 of the row, so a row of up to 512 elements needs 64.
#define KVA_WG_SIZE 64
#define KVA_UNIT 8

#define KVA_FLAG_POSITIONS_BUFFER 1u  // positions[b] from KVA_BIND_POSITIONS

#define KVA_BIND_SRC_K 0      // [B, T, Hkv, D] f32 | f16 | bf16
#define KVA_BIND_SRC_V 1
#define KVA_BIND_DST_K 2      // the cache: [B, C, Hkv, D] or pool [P, page_size, Hkv, D]
#define KVA_BIND_DST_V 3
#define KVA_BIND_K_SCALE 4    // quantized: f16 [cache rows, groups]
#define KVA_BIND_V_SCALE 5
#define KVA_BIND_PAGE_TABLE 6 // paged: u32 [B, max_pages]
#define KVA_BIND_POSITIONS 7  // u32 [B]: position of token 0 of each sequence
#define KVA_BIND_HOT_K 8      // KVA_SC_HOT_RING: f16 [B, hot_window, Hkv, D]
#define KVA_BIND_HOT_V 9
#define KVA_BINDINGS 10

#ifdef __cplusplus
#include <cstdint>
namespace vkattn::kvappend {
using uint = uint32_t;
#define KVA_PUSH_STRUCT struct KvAppendPush
#else
#define KVA_PUSH_STRUCT layout(push_constant) uniform KvAppendPush
#endif

KVA_PUSH_STRUCT {
  uint batch;
  uint tokens;        // T new tokens per sequence
  uint num_kv_heads;
  uint capacity;      // contiguous/ring: slots per sequence; paged: page size
  uint max_pages;     // paged: page-table row length
  uint num_pages;     // paged: pages in the pool
  uint flags;         // KVA_FLAG_*
  uint position;      // used unless KVA_FLAG_POSITIONS_BUFFER
  uint hot_window;    // KVA_SC_HOT_RING: slots of the hot ring (> 0)
}
#ifdef __cplusplus
;
static_assert(sizeof(KvAppendPush) == 36);
}  // namespace vkattn::kvappend
#else
pc;
#endif

#endif

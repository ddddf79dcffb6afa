// Shared by text_attention.comp, text_split_reduce.comp and src/ops/text/*.cpp:
// specialization-constant ids, enum codes and push-constant layout, declared once.
#ifndef VKATTN_TEXT_ATTENTION_INTERFACE_H
#define VKATTN_TEXT_ATTENTION_INTERFACE_H

#include "dtype_interface.h"

// constant_id of each specialization constant.
#define TEXT_SC_HEAD_DIM 0       // D, a multiple of 8
#define TEXT_SC_WG_SIZE 1        // invocations per workgroup
#define TEXT_SC_Q_POS 2          // query positions per workgroup
#define TEXT_SC_HEAD_GROUP 3     // query heads per workgroup, all sharing one KV head
#define TEXT_SC_TILE_KEYS 4      // keys staged in shared memory per step
#define TEXT_SC_Q_TYPE 5         // DTYPE_*
#define TEXT_SC_KV_TYPE 6
#define TEXT_SC_O_TYPE 7
#define TEXT_SC_LAYOUT 8         // TEXT_LAYOUT_*
#define TEXT_SC_SPLIT 9          // TEXT_SPLIT_*: whether and how the KV range is split across workgroups
#define TEXT_SC_ACC_CHUNKS 10    // vec4 accumulators per invocation = ceil(rows*D/4 / WG)
#define TEXT_SC_SUBGROUP_SIZE 11  // text_decode_online/_flash: lanes per subgroup (the required size)
#define TEXT_SC_KEY_LANES 12      // text_decode_flash: lanes sharing one key row (a power of two <= subgroup size)
#define TEXT_SC_KV_GROUP 13       // quantized KV: elements per scale (KV_QUANT_GROUP_ROW: one per row)
#define TEXT_SC_KV_STAGES 14      // flash_coopmat: K/V tile buffers in shared memory (2: loads overlap a barrier; 1: larger tiles)
#define TEXT_SC_COUNT 15

// text_decode_flash and text_decode_online merge their subgroups' (m, l, acc)
// in shared memory: vec4s of acc for `nsg` subgroups x `heads` query heads x
// head dim `d`, plus one (m, l) pair of floats per subgroup and head. The
// shaders size their arrays with these, the planner its shared-memory budget.
#define TEXT_FLASH_MERGE_VEC4S(nsg, heads, d) ((nsg) * (heads) * ((d) / 4))
#define TEXT_FLASH_SHARED_BYTES(nsg, heads, d) (TEXT_FLASH_MERGE_VEC4S(nsg, heads, d) * 16 + (nsg) * (heads) * 8)
// text_decode_flash: the elements of a K/V row one lane loads as one word.
// 16 bytes of f32 (4) or f16/bf16 (8); of int8/int4 rows 16 codes (16 or 8
// bytes, one scale) where the head dim is a multiple of 16, else 8. A tiered
// cache's rows stay at 8 codes: its f16 hot rows would need two 16-byte
// words beside each 16-code word, and those registers halved the speed on an
// H100 (B4 L32768 GQA 32/8 D128: 0.43 -> 0.79 ms). The planner sizes key
// lanes and head groups by it, the shader its loads. (Selects only:
// glslang's specialization-constant && and || do not survive its optimizer.)
#define TEXT_FLASH_CODES_PER_WORD(d, tiered) ((tiered) ? 8u : (d) % 16u == 0u ? 16u : 8u)
#define TEXT_FLASH_ELEMS_PER_WORD(kv_type, d, tiered)             \
  ((kv_type) == DTYPE_F32    ? 4u                                 \
   : (kv_type) == DTYPE_INT8 ? TEXT_FLASH_CODES_PER_WORD(d, tiered) \
   : (kv_type) == DTYPE_INT4 ? TEXT_FLASH_CODES_PER_WORD(d, tiered) \
                             : 8u)
// text_decode_online built without subgroup arithmetic (decode_chunked) adds
// one float per head, key of a step (`kb`) and lane (`wg`): the lane-sum tree.
#define TEXT_ONLINE_LANE_PART_FLOATS(heads, kb, wg) ((heads) * (kb) * (wg))
#define TEXT_ONLINE_SHARED_BYTES(nsg, heads, d, kb, wg, lane_tree) \
  (TEXT_FLASH_SHARED_BYTES(nsg, heads, d) + ((lane_tree) ? 4 * TEXT_ONLINE_LANE_PART_FLOATS(heads, kb, wg) : 0))

// TEXT_SC_SPLIT: one workgroup per row sees every key; or each split writes
// un-normalised partials that text_split_reduce.comp combines; or the last
// split of each row to finish combines them (text_split_combine.glsl), which
// saves the reduce dispatch and its barrier.
// The last split's merge (text_split_combine.glsl) keeps this many partials'
// loads in flight per invocation; the planner lets the last split combine
// where each of its invocations reads at most two such rounds.
#define TEXT_LAST_SPLIT_MERGE_LOADS 16
// Invocations of that merge sharing each of its `columns` output columns
// (heads x D/4): several where the workgroup has at least twice as many
// invocations as columns and the shared memory lent to the merge holds two
// vec4s per invocation, and no more than make each one's list of `splits`
// one round of loads. Shader and planner (split_grid.cpp) both use it.
#define TEXT_LAST_SPLIT_ROUNDS(splits) (((splits) + TEXT_LAST_SPLIT_MERGE_LOADS - 1u) / TEXT_LAST_SPLIT_MERGE_LOADS)
#define TEXT_LAST_SPLIT_LANES(wg, columns, pool_vec4s, splits)                                  \
  ((wg) < 2u * (columns) || (pool_vec4s) < 2u * (wg) ? 1u                                        \
   : (wg) / (columns) < TEXT_LAST_SPLIT_ROUNDS(splits) ? (wg) / (columns) : TEXT_LAST_SPLIT_ROUNDS(splits))
#define TEXT_SPLIT_NONE 0
#define TEXT_SPLIT_PARTIALS 1
#define TEXT_SPLIT_LAST_COMBINES 2

#define TEXT_LAYOUT_CONTIGUOUS 0
#define TEXT_LAYOUT_RING 1
#define TEXT_LAYOUT_PAGED 2
#define TEXT_LAYOUT_TIERED 3  // hot f16 ring + cold tier (contiguous, or paged with TEXT_FLAG_COLD_PAGED)

// Push-constant flag bits.
#define TEXT_FLAG_CAUSAL 1u
#define TEXT_FLAG_KV_LEN_BUFFER 2u     // kv_len[b] from binding 5
#define TEXT_FLAG_START_POS_BUFFER 4u  // start_pos[b] from binding 6
#define TEXT_FLAG_KV_START_BUFFER 8u   // kv_start[b] from binding 7
#define TEXT_FLAG_COLD_PAGED 16u       // TEXT_LAYOUT_TIERED: the cold tier is a paged pool

// Bindings.
#define TEXT_BIND_Q 0
#define TEXT_BIND_K 1
#define TEXT_BIND_V 2
#define TEXT_BIND_O 3
#define TEXT_BIND_PAGE_TABLE 4
#define TEXT_BIND_KV_LEN 5
#define TEXT_BIND_START_POS 6
#define TEXT_BIND_KV_START 7
#define TEXT_BIND_PARTIAL_O 8   // f32 [B, splits, S, H, D]
#define TEXT_BIND_PARTIAL_ML 9  // f32 [B, splits, S, H, 2] (running max, running sum)
#define TEXT_BIND_K_SCALE 10    // quantized KV: f16 scales [rows of K, groups]
#define TEXT_BIND_V_SCALE 11
#define TEXT_BIND_HOT_K 12      // TEXT_LAYOUT_TIERED: f16 [B, hot_window, Hkv, D]
#define TEXT_BIND_HOT_V 13
#define TEXT_BIND_KV_ADDRESS 14  // KV_BY_ADDRESS modules: u32 [4], the device addresses of K and V (lo, hi)
#define TEXT_BIND_SPLIT_ARRIVALS 15  // TEXT_SPLIT_LAST_COMBINES: u32 [B, S, H], splits finished per row group; zero between calls
#define TEXT_BINDINGS 16

// Shaders of other ops that share the dtype and layout codes (kv_append.comp)
// define TEXT_CODES_ONLY: they declare push constants of their own.
#ifndef TEXT_CODES_ONLY
#ifdef __cplusplus
#include <cstdint>
namespace vkattn::text {
using uint = uint32_t;
#define TEXT_PUSH_STRUCT struct TextPush
#else
#define TEXT_PUSH_STRUCT layout(push_constant) uniform TextPush
#endif

TEXT_PUSH_STRUCT {
  uint batch;
  uint seq_len;
  uint num_heads;
  uint num_kv_heads;
  uint capacity;    // contiguous/ring: slots per sequence; paged: page size
  uint max_pages;   // paged: page-table row length
  uint num_pages;   // paged: pages in the pool
  uint flags;       // TEXT_FLAG_*
  uint kv_len;      // used unless TEXT_FLAG_KV_LEN_BUFFER
  uint start_pos;   // used unless TEXT_FLAG_START_POS_BUFFER
  uint kv_start;    // used unless TEXT_FLAG_KV_START_BUFFER
  uint window;      // 0: none
  float scale;
  float softcap;    // 0: none
  uint num_splits;  // KV splits (1 unless TEXT_SC_SPLIT)
  uint pad0;
  // Element strides of dims 0-2 (the last dim is contiguous), multiples of 8:
  // q and out [B, S, H]; k and v [B, C, Hkv] or, paged, [P, page_size, Hkv].
  uint q_strides[3];
  uint k_strides[3];
  uint v_strides[3];
  uint o_strides[3];
  uint hot_window;  // TEXT_LAYOUT_TIERED: slots of the hot ring (> 0)
}
#ifdef __cplusplus
;
}  // namespace vkattn::text
#else
pc;
#endif
#endif  // TEXT_CODES_ONLY

#endif

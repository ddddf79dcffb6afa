#version 450
// Flash attention (FlashAttention-2 order) on workgroup-scope matrices
// (GL_NV_cooperative_matrix2) for text prefill and vision over contiguous
// f16 K/V. A workgroup owns BR query positions of one head; each step loads a
// tile of TK keys as K^T and V matrices straight from the K/V buffers
// (tensor addressing: strides, and zeros past the visible keys), so nothing
// is staged by hand, and the driver spreads the BR x TK and BR x D products
// over the workgroup's warps as it sees fit. The aim is to lift what limits
// flash_coopmat.comp, where every warp loads every K and V fragment of a tile
// for its own 16 rows; on the H200 this kernel as first written measured
// 1.11-1.38x that engine's time, and with K/V staged by hand in shared
// memory 1.24-1.40x on the H100 (docs/performance.md, "Flash attention on
// workgroup-scope matrices" and the section after it), so the planner ranks
// it second.
//   step 1: Q (f16, or f32 rounded to f16 once) loaded as one BR x DP matrix;
//   step 2: S = Q K^T (f16 x f16 -> f32);
//   step 3: scores to log2 units (scale, or softcap), the mask where a row
//           does not see the whole tile, row maxima by a row reduction,
//           online softmax in f32, P rounded to f16;
//   step 4: O = diag(alpha) O + P V in f32;
//   step 5: one normalisation by the row sums, O stored (rows past seq_len
//           and the padded columns are outside the stored slice).
//
// The matrix layer (types, loads, products, row reductions, the mask by
// element position, the store) is flash_workgroup_coopmat2.glsl, or with
// WG_EMULATED flash_workgroup_emulated.glsl in plain GLSL, which any device
// runs, so CI checks this kernel's tiling, masking, softmax and addressing
// on lavapipe. Element-wise steps are loops over an invocation's elements:
// element i of two matrices of one type is the same (row, column) in both
// layers.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable

#include "text_attention_interface.h"
#include "flash_interface.h"

layout(constant_id = TEXT_SC_HEAD_DIM) const uint D = 128;  // a multiple of 8
layout(constant_id = TEXT_SC_WG_SIZE) const uint WG = 128;
layout(constant_id = TEXT_SC_Q_POS) const uint BR = 64;     // query positions per workgroup
layout(constant_id = TEXT_SC_TILE_KEYS) const uint TK = 64; // keys per step
layout(constant_id = TEXT_SC_Q_TYPE) const uint Q_TYPE = DTYPE_F16;  // f16 or f32
layout(constant_id = TEXT_SC_O_TYPE) const uint O_TYPE = DTYPE_F16;  // f16 or f32

layout(local_size_x_id = TEXT_SC_WG_SIZE) in;

// Padded to whole 16-column fragments: the padding loads as zeros.
const uint DP = FLASH_PADDED_DIM(D);
const float LOG2E = 1.4426950408889634;
// The running maximum starts at -FLT_MAX/2, not -inf: a row that has seen
// only masked (-inf) scores then gets weights exp2(-inf) = 0 and alpha 1,
// never -inf - -inf.
const float NO_MAX = -1.7014117e38;
const float NEG_INF = -1.0 / 0.0;

layout(std430, binding = TEXT_BIND_KV_LEN) readonly buffer KvLen { uint kv_len_buf[]; };
layout(std430, binding = TEXT_BIND_START_POS) readonly buffer StartPos { uint start_pos_buf[]; };
layout(std430, binding = TEXT_BIND_KV_START) readonly buffer KvStart { uint kv_start_buf[]; };

#include "text_key_range.glsl"

// What the mask needs of this workgroup: its first query index and the
// sequence's start position, the tile's first key index, the end of the
// visible keys and kv_start. Set before each masked tile.
uint mask_q0, mask_start_pos, mask_j0, mask_j_hi, mask_kv_start;
bool mask_causal;

// Score (row, col) of the tile, or -inf where that query does not see that key.
float masked_score(uint row, uint col, float s) {
  const uint qi = mask_q0 + row, j = mask_j0 + col;
  const uint qpos = qi < pc.seq_len ? text_query_pos(mask_start_pos, qi) : TEXT_INVALID_POS;
  const uint kpos = j < mask_j_hi ? mask_kv_start + j : TEXT_INVALID_POS;
  return text_key_visible(qpos, kpos, pc.window, mask_causal) ? s : NEG_INF;
}

#ifdef WG_EMULATED
#include "flash_workgroup_emulated.glsl"
#else
#include "flash_workgroup_coopmat2.glsl"
#endif


void main() {
  const bool causal = (pc.flags & TEXT_FLAG_CAUSAL) != 0u;
  const uint q_blocks = (pc.seq_len + BR - 1u) / BR;
  // Causal rows see more keys the later they sit: the longest blocks first,
  // so the last wave holds short ones.
  const uint group_q = (causal ? q_blocks - 1u - gl_WorkGroupID.x : gl_WorkGroupID.x) * BR;
  const uint h = gl_WorkGroupID.y;
  const uint kvh = h / (pc.num_heads / pc.num_kv_heads);
  const uint b = gl_WorkGroupID.z;
  // Indirect dispatches may ask for more workgroups than the call has.
  if (b >= pc.batch || h >= pc.num_heads || gl_WorkGroupID.x >= q_blocks) return;

  const uint kv_len = (pc.flags & TEXT_FLAG_KV_LEN_BUFFER) != 0u ? kv_len_buf[b] : pc.kv_len;
  const uint start_pos = (pc.flags & TEXT_FLAG_START_POS_BUFFER) != 0u ? start_pos_buf[b] : pc.start_pos;
  const uint kv_start = (pc.flags & TEXT_FLAG_KV_START_BUFFER) != 0u ? kv_start_buf[b] : pc.kv_start;

  const uint last_q = min(group_q + BR, pc.seq_len) - 1u;
  const uint q_first = text_query_pos(start_pos, group_q), q_last = text_query_pos(start_pos, last_q);
  const uvec2 range = text_key_range(kv_len, kv_start, q_first, q_last, pc.window, causal, TEXT_LAYOUT_CONTIGUOUS,
                                     pc.capacity, pc.max_pages);
  const uint j_lo = range.x, j_hi = range.y;
  const uint n_tiles = (j_hi - j_lo + TK - 1u) / TK;

  // Step 1.
  MatQ q;
  wg_load_q(q, b * pc.q_strides[0] + h * pc.q_strides[2], group_q);

  MatO o;
  MatS run_max, run_sum;
  wg_fill_o(o, 0.0);
  wg_fill_s(run_max, NO_MAX);
  wg_fill_s(run_sum, 0.0);
  const uint k_base = b * pc.k_strides[0] + kvh * pc.k_strides[2];
  const uint v_base = b * pc.v_strides[0] + kvh * pc.v_strides[2];
  // Keys are slots kv_start + j; slots from kv_start + j_hi on load as zeros.
  const uint slot_end = kv_start + j_hi;
  const float to_log2 = pc.softcap > 0.0 ? pc.softcap * LOG2E : pc.scale * LOG2E;
  const float to_cap = pc.softcap > 0.0 ? pc.scale / pc.softcap : 1.0;
  mask_q0 = group_q;
  mask_start_pos = start_pos;
  mask_j_hi = j_hi;
  mask_kv_start = kv_start;
  mask_causal = causal;

  [[dont_unroll]] for (uint t = 0; t < n_tiles; ++t) {
    const uint j0 = j_lo + t * TK;
    // Step 2.
    MatKT kt;
    wg_load_kt(kt, k_base, kv_start + j0, slot_end);
    MatS s;
    wg_fill_s(s, 0.0);
    wg_mul_add_s(s, q, kt);

    // Step 3.
    if (pc.softcap > 0.0) {
      [[unroll]] for (int i = 0; i < s.length(); ++i) s[i] = to_log2 * tanh(s[i] * to_cap);
    } else {
      [[unroll]] for (int i = 0; i < s.length(); ++i) s[i] *= to_log2;
    }
    if (!text_tile_whole(j0, TK, j_hi, kv_start, q_first, q_last, pc.window, causal)) {
      mask_j0 = j0;
      wg_mask(s);
    }
    MatS tile_max, alpha;
    wg_row_max(tile_max, s);
    [[unroll]] for (int i = 0; i < s.length(); ++i) {
      const float m = max(run_max[i], tile_max[i]);
      alpha[i] = exp2(run_max[i] - m);
      run_max[i] = m;
      s[i] = exp2(s[i] - m);  // the weights P
    }
    MatS tile_sum;
    wg_row_sum(tile_sum, s);
    [[unroll]] for (int i = 0; i < s.length(); ++i) run_sum[i] = alpha[i] * run_sum[i] + tile_sum[i];

    // Step 4.
    MatO alpha_o;
    wg_row_spread(alpha_o, alpha);
    [[unroll]] for (int i = 0; i < o.length(); ++i) o[i] *= alpha_o[i];
    MatV v;
    wg_load_v(v, v_base, kv_start + j0, slot_end);
    MatP p;
    wg_to_p(p, s);
    wg_mul_add_o(o, p, v);
  }

  // Step 5: a row that saw no key has sum 0 and outputs zeros.
  MatO sum_o;
  wg_row_spread(sum_o, run_sum);
  [[unroll]] for (int i = 0; i < o.length(); ++i) o[i] = sum_o[i] == 0.0 ? 0.0 : o[i] / sum_o[i];
  wg_store_o(o, b * pc.o_strides[0] + h * pc.o_strides[2], group_q);
}

#version 450
// Tensor-core flash attention (FlashAttention-2 tiling) for text prefill,
// decode and vision (a bidirectional call of one sequence whose strides say
// PHD or HPD): one source, built twice. The default build takes its 16x16
// fragments from GL_NV_cooperative_matrix; with FLASH_EMULATED the same kernel
// takes them from a plain-GLSL layer, so devices without tensor cores (lavapipe in CI) run the
// tiling, masking, softmax and addressing below against the oracle.
//
// A workgroup of NW warps owns ROWS = NW x 16 = Q_POS x HEAD_GROUP query rows
// that share one KV head (GQA heads together); warp w owns rows 16w .. 16w+15.
// It walks the keys its rows can see (fully masked tiles are never visited) in
// tiles of TK keys staged in shared memory: the global loads of tile t+1 are
// issued into registers before the matrix work on tile t (after it at D256,
// see PREFETCH) and land in shared memory after it. With KV_STAGES 2 they
// land in the other buffer, so one workgroup barrier per tile separates the
// buffers; with 1 (twice the keys per tile in the same shared memory) a
// second barrier waits for every warp to finish with the one buffer.
// Scores, softmax state and P stay in the warp's accumulator fragments
// (registers): the softmax works on fragment elements, whose row
// and column the fragment layer names, and a row's maximum and sum come from
// the fragment layer's row reductions. Within a tile a warp exchanges nothing
// with the other warps, so they overlap one another's
// matrix and softmax work.
// A head dim that is not a multiple of 16 (SigLIP's 72) is padded to one in
// shared memory with zero lanes: they add nothing to Q K^T, and the output
// columns they give are never written.
//   step 1: Q rows, rounded to f16 once, staged and loaded into fragments;
//   step 2: S = Q K^T per warp (f16 x f16 -> f32), kept in fragments;
//   step 3: scale (or softcap), then the mask where a row does not see the
//           whole tile, each a loop over the elements; per row the tile's
//           maximum; online softmax in f32; P rounded to f16; rescale alpha;
//   step 4: O = diag(alpha) O + P V in f32 accumulators, P straight from
//           its fragments;
//   step 5: one normalisation by the row sums, output written.
//
// Decode runs the same steps with SPLIT: a query position's HEAD_GROUP heads
// fill (part of) one warp's 16 rows, so the heads sharing a KV head score its
// keys with one matrix product instead of one dot product each; the keys are
// cut into num_splits chunks of whole tiles, and step 5 leaves un-normalised
// partials for text_split_reduce.comp.
//
// bf16 (and f32 Q) are staged as f16 times a power of two (f16_stage_shift):
// Q per row, K per tile, both undone on the scores; V against a running
// power that O is held at, O scaled down when a tile needs a larger one and
// back up at the end. bf16 is exact so (its mantissa fits f16's); f32 Q is
// rounded to f16, but not past f16's range. int8/int4 K/V (kv_quant.glsl)
// take the same path: a unit of 8 codes with its scale is fetched in place of
// an f16 word (8 or 4 bytes of codes instead of 16), decoded to code x scale
// in f32 and staged as f16 at the tile's power, so each value is rounded to
// f16 once.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable
#ifdef KV_BY_ADDRESS
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#endif

#include "text_attention_interface.h"
#include "flash_interface.h"
#include "text_common.glsl"

layout(constant_id = TEXT_SC_HEAD_DIM) const uint D = 128;  // a multiple of 8
layout(constant_id = TEXT_SC_WG_SIZE) const uint WG = 128;  // NW warps of 32
layout(constant_id = TEXT_SC_Q_POS) const uint Q_POS = 16;
layout(constant_id = TEXT_SC_HEAD_GROUP) const uint HEAD_GROUP = 4;
layout(constant_id = TEXT_SC_TILE_KEYS) const uint TK = 32;  // a multiple of 16, at most WG
layout(constant_id = TEXT_SC_Q_TYPE) const uint Q_TYPE = DTYPE_F16;  // f16, f32 or bf16
layout(constant_id = TEXT_SC_KV_TYPE) const uint KV_TYPE = DTYPE_F16;  // f16, bf16, int8, int4, or f32 rounded to f16 when staged
layout(constant_id = TEXT_SC_O_TYPE) const uint O_TYPE = DTYPE_F16;
layout(constant_id = TEXT_SC_LAYOUT) const uint LAYOUT = TEXT_LAYOUT_CONTIGUOUS;
layout(constant_id = TEXT_SC_SPLIT) const uint SPLIT = 0;
layout(constant_id = TEXT_SC_KV_STAGES) const uint KV_STAGES = 2;  // 1 or 2
layout(constant_id = TEXT_SC_KV_GROUP) const uint KV_GROUP = 0;    // quantized K/V: elements per scale

layout(local_size_x_id = TEXT_SC_WG_SIZE) in;

layout(std430, binding = TEXT_BIND_Q) readonly buffer QBuf { uvec4 q_words[]; };
layout(std430, binding = TEXT_BIND_O) writeonly buffer OBuf4 { uvec4 o_words4[]; };
layout(std430, binding = TEXT_BIND_O) writeonly buffer OBuf2 { uvec2 o_words2[]; };
layout(std430, binding = TEXT_BIND_PAGE_TABLE) readonly buffer PageTable { uint page_table[]; };
layout(std430, binding = TEXT_BIND_KV_LEN) readonly buffer KvLen { uint kv_len_buf[]; };
layout(std430, binding = TEXT_BIND_START_POS) readonly buffer StartPos { uint start_pos_buf[]; };
layout(std430, binding = TEXT_BIND_KV_START) readonly buffer KvStart { uint kv_start_buf[]; };
layout(std430, binding = TEXT_BIND_PARTIAL_O) writeonly buffer PartialO { vec4 partial_o[]; };
layout(std430, binding = TEXT_BIND_PARTIAL_ML) writeonly buffer PartialML { vec2 partial_ml[]; };

const uint ROWS = Q_POS * HEAD_GROUP;
const uint D8 = D / 8;                             // f16 words of one row's real columns
const uint DP8 = FLASH_PADDED_DIM(D) / 8;          // f16 words of a staged row, zero past D8
const uint D16 = FLASH_PADDED_DIM(D) / FLASH_FRAG;  // fragments across the padded head dim
const uint D4 = D / 4;                             // vec4s of one row's real columns (partials)
const uint TK16 = TK / FLASH_FRAG;                 // fragments across a key tile
const uint ROW_WORDS = DP8 + FLASH_ROW_PAD_WORDS;  // a staged Q/K/V row
const uint STAGE_WORDS = 2 * TK * ROW_WORDS;       // K then V of one tile
const uint Q_WORDS = ROWS * ROW_WORDS;
const uint KV_REGION = KV_STAGES * STAGE_WORDS > Q_WORDS ? KV_STAGES * STAGE_WORDS : Q_WORDS;  // Q is staged there first
const uint S_BASE = KV_REGION;                   // the warps' scratch tiles
const uint KV_CHUNKS = (TK * DP8 + WG - 1) / WG;   // words of K (and of V) each invocation stages per tile
const float NEG_INF = -1.0 / 0.0;
const float LOG2E = 1.4426950408889634;  // scores in log2 units: exp(x) = exp2(x log2(e))
const float LN2 = 0.6931471805599453;
// The next tile's K/V words wait in registers during this tile's products
// where the O fragments leave room (head dims up to 128); at D256 they load
// after the products (H200: causal S8192 D256 14.7 -> 12.9 ms).
const bool PREFETCH = D16 <= 8;
// Causal rows see more keys the later they sit: with LONGEST_FIRST the
// longest query blocks are dispatched first, so the last wave of workgroups
// holds short ones (H200, causal D128: S4096 1.160 -> 1.016 ms, S16384 -3%).
// At D256 (64-row workgroups, two per compute unit) the natural order measured
// 3-8% faster.
const bool LONGEST_FIRST = D16 <= 8;
const float RESCALE_SLACK = 8.0;  // log2 units: weights below 256
const bool Q_SCALED = Q_TYPE != DTYPE_F16;    // each Q row staged as f16 times 2^-s
// Each K tile, and V at a running power.
const bool KV_SCALED = KV_TYPE == DTYPE_BF16 || KV_TYPE == DTYPE_INT8 || KV_TYPE == DTYPE_INT4;

shared uvec4 tile_pool[KV_REGION + ROWS * FLASH_SCRATCH_STRIDE];
shared uint key_pos[KV_STAGES * TK];  // per buffer; TEXT_INVALID_POS for keys past the range or behind a bad page
shared uint row_pos[ROWS];    // absolute query position, TEXT_INVALID_POS past seq_len
// KV_SCALED: per tile parity, the tile's largest |k| and |v| as f32 bits
// (abs_max8), gathered before it is staged.
shared uint tile_top_bits[FLASH_TILE_STATE_BYTES / 4];

#include "text_key_range.glsl"
#include "text_kv_addressing.glsl"
#include "text_row_write.glsl"
#include "kv_quant.glsl"
#ifdef FLASH_EMULATED
#include "flash_fragment_emulated.glsl"
#else
#include "flash_fragment_coopmat.glsl"
#endif

// Word w of a K (is_k) or V row as f16, from either tier (the hot ring is f16).
uvec4 kv_f16_word(bool is_k, KvRow row, uint w) {
  if (kv_row_type(row.hot) == DTYPE_F16) return kv_word4(is_k, row, w);
  return pack_f16x8(uintBitsToFloat(kv_word4(is_k, row, 2 * w)), uintBitsToFloat(kv_word4(is_k, row, 2 * w + 1)));
}

// The next tile, in flight in registers while the current one is used: f16
// words, or with KV_SCALED the stored words (quantized: units from kvq_load8)
// and whether each chunk's row came from the (f16) hot ring.
uvec4 k_next[KV_CHUNKS];
uvec4 v_next[KV_CHUNKS];
bool hot_next[KV_CHUNKS];
uint pos_next;
// KV_SCALED: the powers the staged tile's K and V were divided by.
int k_shift = 0, v_staged = F16_STAGE_SHIFT_NONE;

void fetch_tile(uint b, uint kvh, uint kv_start, uint t0, uint j_hi) {
  const uint tid = gl_LocalInvocationIndex;
  [[unroll]] for (uint a = 0; a < KV_CHUNKS; ++a) {
    const uint i = tid + a * WG;
    k_next[a] = uvec4(0);
    v_next[a] = uvec4(0);  // zero rows: masked keys must not bring NaN into P V
    const uint j = t0 + i / DP8, w = i % DP8;
    KvRow row = kv_row_none();
    if (i < TK * DP8 && w < D8 && j < j_hi && kv_row(b, kv_start + j, kvh, row)) {
      if (kv_quantized() && !row.hot) {
        k_next[a] = kvq_load8(true, row.k + 8u * w);
        v_next[a] = kvq_load8(false, row.v + 8u * w);
      } else {
        k_next[a] = KV_SCALED ? kv_word4(true, row, w) : kv_f16_word(true, row, w);
        v_next[a] = KV_SCALED ? kv_word4(false, row, w) : kv_f16_word(false, row, w);
      }
    }
    hot_next[a] = row.hot;
  }
  const uint j = t0 + tid;
  uint outer, inner;
  pos_next = tid < TK && j < j_hi && kv_coords(b, kv_start + j, outer, inner) ? kv_start + j : TEXT_INVALID_POS;
}

// KV_SCALED: chunk a of the fetched K (is_k) or V words as 8 floats.
void fetched_floats(bool is_k, uint a, out vec4 lo, out vec4 hi) {
  kv_unpack(kv_row_type(hot_next[a]), is_k ? k_next[a] : v_next[a], lo, hi);
}

// KV_SCALED: the fetched tile's largest |k| and |v| into the slots of its
// parity, before the barrier that put_tile waits behind.
void publish_tile_top(uint parity) {
  float mk = 0.0, mv = 0.0;
  [[unroll]] for (uint a = 0; a < KV_CHUNKS; ++a) {
    vec4 lo, hi;
    fetched_floats(true, a, lo, hi);
    mk = max(mk, abs_max8(lo, hi));
    fetched_floats(false, a, lo, hi);
    mv = max(mv, abs_max8(lo, hi));
  }
  WARP_ATOMIC_MAX(tile_top_bits[2u * parity], floatBitsToUint(mk));
  WARP_ATOMIC_MAX(tile_top_bits[2u * parity + 1u], floatBitsToUint(mv));
}

// The fetched tile (of `parity`) into buffer `stage`. With KV_SCALED, after
// publish_tile_top and a barrier: K at its own power, V at the running one,
// which grows to the tile's where that is larger (O follows before P V). The
// other parity's slots are cleared for the tile after: every read of them
// was before the barrier that ended the previous tile.
void put_tile(uint stage, uint parity) {
  const uint tid = gl_LocalInvocationIndex;
  vec2 scale = vec2(1.0);  // K, V
  if (KV_SCALED) {
    k_shift = f16_stage_shift(uintBitsToFloat(tile_top_bits[2u * parity]));
    const int v_tile = f16_stage_shift(uintBitsToFloat(tile_top_bits[2u * parity + 1u]));
    scale = ldexp(vec2(1.0), -ivec2(k_shift, max(v_tile, v_staged)));
    v_staged = max(v_tile, v_staged);
    if (tid == 0u) {
      tile_top_bits[2u * (parity ^ 1u)] = 0u;
      tile_top_bits[2u * (parity ^ 1u) + 1u] = 0u;
    }
  }
  [[unroll]] for (uint a = 0; a < KV_CHUNKS; ++a) {
    const uint i = tid + a * WG;
    if (i >= TK * DP8) break;
    const uint at = stage * STAGE_WORDS + (i / DP8) * ROW_WORDS + i % DP8;
    uvec4 k_word = k_next[a], v_word = v_next[a];
    if (KV_SCALED) {
      vec4 lo, hi;
      fetched_floats(true, a, lo, hi);
      k_word = pack_f16x8(lo * scale.x, hi * scale.x);
      fetched_floats(false, a, lo, hi);
      v_word = pack_f16x8(lo * scale.y, hi * scale.y);
    }
    tile_pool[at] = k_word;
    tile_pool[at + TK * ROW_WORDS] = v_word;
  }
  if (tid < TK) key_pos[stage * TK + tid] = pos_next;
}

// Whether every query row of the workgroup sees every key of the tile
// starting at key index j0 (text_tile_whole): then the softmax skips the
// per-pair mask. Interior tiles of bidirectional (vision) and causal calls
// are; a paged tile never is, since a key behind a bad page entry is masked
// one by one.
bool tile_whole(uint j0, uint j_hi, uint kv_start, uint q_first, uint q_last, bool causal) {
  return kv_slot_layout() != TEXT_LAYOUT_PAGED &&
         text_tile_whole(j0, TK, j_hi, kv_start, q_first, q_last, pc.window, causal);
}

// The value of per-row `rows` (frag_row_value) for the row whose output this
// invocation writes, from scratch word `at` of that row: through the warp's
// scratch tile, since the two layouts differ. Call from warp-uniform control flow.
float written_row_value(vec2 rows, uint scratch, uint at) {
  FragC per_row;
  [[unroll]] for (int i = 0; i < per_row.length(); ++i) per_row[i] = frag_row_value(rows, i);
  frag_store_c(per_row, scratch, FLASH_SCRATCH_STRIDE);
  warp_barrier();
  const float v = uintBitsToFloat(tile_pool[at].x);
  warp_barrier();
  return v;
}

void main() {
  const uint tid = gl_LocalInvocationIndex;
  const uint warp = tid / FLASH_WARP;
  const bool causal = (pc.flags & TEXT_FLAG_CAUSAL) != 0u;
  const uint q_blocks = (pc.seq_len + Q_POS - 1u) / Q_POS;
  const uint group_q = (causal && LONGEST_FIRST ? q_blocks - 1u - gl_WorkGroupID.x : gl_WorkGroupID.x) * Q_POS;
  const uint groups_per_kv = (pc.num_heads / pc.num_kv_heads) / HEAD_GROUP;
  const uint kvh = gl_WorkGroupID.y / groups_per_kv;
  const uint head0 = kvh * (pc.num_heads / pc.num_kv_heads) + (gl_WorkGroupID.y % groups_per_kv) * HEAD_GROUP;
  const uint b = gl_WorkGroupID.z / pc.num_splits;
  const uint split = gl_WorkGroupID.z % pc.num_splits;
  // Indirect dispatches may ask for more workgroups than the call has.
  if (b >= pc.batch || gl_WorkGroupID.y >= pc.num_kv_heads * groups_per_kv || gl_WorkGroupID.x >= q_blocks) return;

  const uint kv_len = (pc.flags & TEXT_FLAG_KV_LEN_BUFFER) != 0u ? kv_len_buf[b] : pc.kv_len;
  const uint start_pos = (pc.flags & TEXT_FLAG_START_POS_BUFFER) != 0u ? start_pos_buf[b] : pc.start_pos;
  const uint kv_start = (pc.flags & TEXT_FLAG_KV_START_BUFFER) != 0u ? kv_start_buf[b] : pc.kv_start;
  kv_tier_begin(kv_len, kv_start);

  // Keys these rows can see at all (causal ends early, a window starts late;
  // fully masked tiles are never visited), clamped to the cache.
  const uint last_q = min(group_q + Q_POS, pc.seq_len) - 1u;
  const uint q_first = text_query_pos(start_pos, group_q), q_last = text_query_pos(start_pos, last_q);
  uvec2 range = text_key_range(kv_len, kv_start, q_first, q_last, pc.window, causal, kv_slot_layout(), pc.capacity,
                               pc.max_pages);
  if (SPLIT != 0u) range = text_split_range_in_steps(range, split, pc.num_splits, TK);
  const uint j_lo = range.x, j_hi = range.y;
  const uint n_tiles = (j_hi - j_lo) / TK + ((j_hi - j_lo) % TK != 0u ? 1u : 0u);

  // Step 1: Q rows to f16 (f32 Q is rounded here, once), then into fragments.
  // With Q_SCALED each row's largest |q| first (in the scratch tiles, free
  // until the tiles start), then the row divided by 2^s.
  for (uint r = tid; r < ROWS; r += WG) {
    const uint qi = group_q + r / HEAD_GROUP;
    row_pos[r] = qi < pc.seq_len ? text_query_pos(start_pos, qi) : TEXT_INVALID_POS;
    if (Q_SCALED) tile_pool[S_BASE + r].x = 0u;
  }
  if (tid < FLASH_TILE_STATE_BYTES / 4) tile_top_bits[tid] = 0u;
  if (Q_SCALED) {
    barrier();
    for (uint i = tid; i < ROWS * D8; i += WG) {
      const uint r = i / D8, qi = group_q + r / HEAD_GROUP;
      if (qi >= pc.seq_len) continue;
      vec4 lo, hi;
      ROW_FLOATS(q_words, Q_TYPE, q_row_elem(b, qi, head0 + r % HEAD_GROUP), i % D8, lo, hi)
      atomicMax(tile_pool[S_BASE + r].x, floatBitsToUint(abs_max8(lo, hi)));
    }
    barrier();
  }
  for (uint i = tid; i < ROWS * DP8; i += WG) {
    const uint r = i / DP8, w = i % DP8;
    const uint qi = group_q + r / HEAD_GROUP;
    uvec4 word = uvec4(0);
    if (qi < pc.seq_len && w < D8) {
      const uint elem = q_row_elem(b, qi, head0 + r % HEAD_GROUP);
      if (Q_SCALED) {
        const float down = ldexp(1.0, -f16_stage_shift(uintBitsToFloat(tile_pool[S_BASE + r].x)));
        vec4 lo, hi;
        ROW_FLOATS(q_words, Q_TYPE, elem, w, lo, hi)
        word = pack_f16x8(lo * down, hi * down);
      } else {
        word = F16_ROW_WORD(q_words, Q_TYPE, elem, w);
      }
    }
    tile_pool[r * ROW_WORDS + w] = word;
  }
  barrier();
  // Per row of this invocation's (frag_row_value): the power its Q row was divided by.
  const ivec2 q_shifts = Q_SCALED ? ivec2(f16_stage_shift(uintBitsToFloat(tile_pool[S_BASE + warp * FLASH_FRAG + frag_row(0)].x)),
                                          f16_stage_shift(uintBitsToFloat(tile_pool[S_BASE + warp * FLASH_FRAG + frag_row(4)].x)))
                                  : ivec2(0);
  FragA q_frag[D16];
  FRAG_UNROLL for (uint k = 0; k < D16; ++k) frag_load_a(q_frag[k], warp * FLASH_FRAG * ROW_WORDS + 2 * k, ROW_WORDS);
  const uint scratch = S_BASE + warp * FLASH_FRAG * FLASH_SCRATCH_STRIDE;  // this warp's scratch tile
  FragC o_acc[D16];
  FRAG_UNROLL for (uint n = 0; n < D16; ++n) frag_fill(o_acc[n], 0.0);
  barrier();  // Q is in fragments: its staging area takes the first tile

  if (n_tiles > 0) {
    fetch_tile(b, kvh, kv_start, j_lo, j_hi);
    if (KV_SCALED) {
      publish_tile_top(0u);
      barrier();
    }
    put_tile(0u, 0u);
  }
  barrier();

  // Per row of this invocation's (frag_row_value): the running maximum and
  // the running sum of the weights in this invocation's columns (summed
  // across the row once, at the end). Scores are kept in log2 units (scaled
  // by log2(e)), so each weight is one exp2.
  vec2 run_max = vec2(NEG_INF), run_sum = vec2(0.0);
  const float score_scale = pc.softcap > 0.0 ? pc.scale : pc.scale * LOG2E;
  int o_shift = F16_STAGE_SHIFT_NONE;  // KV_SCALED: O is held divided by 2^o_shift
  for (uint t = 0; t < n_tiles; ++t) {
    const uint stage = t % KV_STAGES;
    const uint k_base = stage * STAGE_WORDS, v_base = k_base + TK * ROW_WORDS;
    if (PREFETCH && t + 1 < n_tiles) fetch_tile(b, kvh, kv_start, j_lo + (t + 1) * TK, j_hi);

    // Step 2: S = Q K^T for this warp's 16 rows.
    FragC s[TK16];
    FRAG_UNROLL for (uint n = 0; n < TK16; ++n) {
      frag_fill(s[n], 0.0);
      FRAG_UNROLL for (uint k = 0; k < D16; ++k) {
        FragB kf;
        frag_load_bt(kf, k_base + n * FLASH_FRAG * ROW_WORDS + 2 * k, ROW_WORDS);
        frag_mul_add(s[n], q_frag[k], kf);
      }
    }

    // Step 3: online softmax in f32 on the fragment elements. Scaling,
    // softcap and mask are loops of their own under warp-uniform branches, so
    // the mask (two shared-memory reads and the position tests per element)
    // costs nothing in the tiles every row sees whole, nor softcap's tanh
    // where there is none. With a positive scale and no softcap the scores
    // stay unscaled (the scaled maximum is the maximum, scaled) and the scale
    // enters each weight's exponent in one fused multiply-add.
    // Scaled staging: each row's scores times 2^(its Q power + the tile's K
    // power), one factor, since the products sit near 2^28 and either power
    // alone could overflow (or underflow) on the way.
    const bool whole = tile_whole(j_lo + t * TK, j_hi, kv_start, q_first, q_last, causal);
    const bool fold = pc.softcap <= 0.0 && score_scale > 0.0;
    const vec2 unscale = ldexp(vec2(1.0), q_shifts + k_shift);
    const vec2 exp_scale = fold ? score_scale * unscale : vec2(1.0);
    if (pc.softcap > 0.0) {
      const vec2 to_cap = score_scale / pc.softcap * unscale;
      FRAG_UNROLL for (uint n = 0; n < TK16; ++n) {
        [[unroll]] for (int i = 0; i < s[n].length(); ++i)
          s[n][i] = pc.softcap * LOG2E * tanh(s[n][i] * frag_row_value(to_cap, i));
      }
    } else if (!fold) {
      if (Q_SCALED || KV_SCALED) {
        FRAG_UNROLL for (uint n = 0; n < TK16; ++n) {
          [[unroll]] for (int i = 0; i < s[n].length(); ++i) s[n][i] *= frag_row_value(score_scale * unscale, i);
        }
      } else {
        FRAG_UNROLL for (uint n = 0; n < TK16; ++n) frag_scale(s[n], score_scale);
      }
    }
    if (!whole) {
      FRAG_UNROLL for (uint n = 0; n < TK16; ++n) {
        [[unroll]] for (int i = 0; i < s[n].length(); ++i) {
          if (!text_key_visible(row_pos[warp * FLASH_FRAG + frag_row(i)],
                                key_pos[stage * TK + n * FLASH_FRAG + frag_col(i)], pc.window, causal))
            s[n][i] = NEG_INF;
        }
      }
    }
    vec2 tile_max = vec2(NEG_INF);
    FRAG_UNROLL for (uint n = 0; n < TK16; ++n) tile_max = max(tile_max, frag_lane_rows(s[n], true));
    // The running maximum moves only when a tile's exceeds it by more than
    // RESCALE_SLACK: softmax is the same for any reference value, the weights
    // stay below 2^RESCALE_SLACK (f16 and the f32 sums hold them), and most
    // tiles then leave O alone. A row that has seen no key keeps -inf and alpha 1.
    const vec2 tile_row_max = frag_rows_across(tile_max, scratch, true) * exp_scale;
    const bvec2 grow = greaterThan(tile_row_max, run_max + RESCALE_SLACK);
    const vec2 m_new = mix(run_max, tile_row_max, grow);
    const vec2 alpha = mix(vec2(1.0), exp2(run_max - m_new), grow);
    const bool moved = any(grow);
    run_max = m_new;
    run_sum *= alpha;
    // A row that has seen no key has only -inf scores so far: weights 0 against any finite reference.
    const vec2 m_ref = mix(run_max, vec2(0.0), equal(run_max, vec2(NEG_INF)));
    FRAG_UNROLL for (uint n = 0; n < TK16; ++n) {
      [[unroll]] for (int i = 0; i < s[n].length(); ++i) {
        const float p = exp2(fma(s[n][i], frag_row_value(exp_scale, i), -frag_row_value(m_ref, i)));
        // The sum takes the f16 weights P V uses.
        s[n][i] = unpackHalf2x16(packHalf2x16(vec2(p, 0.0))).x;
      }
      run_sum += frag_lane_rows(s[n], false);
    }

    // Step 4: O = diag(alpha) O + P V. Once the rows' maxima settle most
    // tiles leave every alpha at 1, and the warp skips the rescale (a
    // branch uniform in the warp).
    if (warp_any(moved)) {
      FRAG_UNROLL for (uint n = 0; n < D16; ++n) {
        [[unroll]] for (int i = 0; i < o_acc[n].length(); ++i) o_acc[n][i] *= frag_row_value(alpha, i);
      }
    }
    if (KV_SCALED && v_staged != o_shift) {  // workgroup-uniform: O moves to the tile's larger power
      FRAG_UNROLL for (uint n = 0; n < D16; ++n) frag_scale(o_acc[n], f16_stage_rescale(o_shift, v_staged));
      o_shift = v_staged;
    }
    FRAG_UNROLL for (uint kk = 0; kk < TK16; ++kk) {
      FragA pf;
      frag_to_a(pf, s[kk], scratch);
      FRAG_UNROLL for (uint n = 0; n < D16; ++n) {
        FragB vf;
        frag_load_b(vf, v_base + kk * FLASH_FRAG * ROW_WORDS + 2 * n, ROW_WORDS);
        frag_mul_add(o_acc[n], pf, vf);
      }
    }

    if (t + 1 < n_tiles) {
      if (!PREFETCH) fetch_tile(b, kvh, kv_start, j_lo + (t + 1) * TK, j_hi);
      if (KV_SCALED) publish_tile_top((t + 1) % 2u);
      // Every warp is done with the one buffer; every top of the tile is in.
      if (KV_STAGES == 1u || KV_SCALED) barrier();
      put_tile((t + 1) % KV_STAGES, (t + 1) % 2u);
    }
    barrier();
  }

  // Step 5: each 16x16 block goes out through this warp's scratch tile, its
  // rows normalised once by their sums (a row that saw no key has sum 0 and
  // outputs zeros) or, with SPLIT, left as partials with their max and sum.
  run_sum = frag_rows_across(run_sum, scratch, false);
  if (KV_SCALED && o_shift != F16_STAGE_SHIFT_NONE) {
    FRAG_UNROLL for (uint n = 0; n < D16; ++n) frag_scale(o_acc[n], f16_stage_rescale(o_shift, 0));
  }
  const uint lane = tid % FLASH_WARP;
  const uint r = lane / 2;  // the row of the warp's tile this invocation writes
  const uint at = scratch + r * FLASH_SCRATCH_STRIDE + (lane % 2) * 2;
  // Row r's sum and maximum (back in natural-log units).
  const float row_sum = written_row_value(run_sum, scratch, at);
  const float row_max = written_row_value(run_max * LN2, scratch, at);
  const uint row = warp * FLASH_FRAG + r;
  const uint qi = group_q + row / HEAD_GROUP;
  const uint half_col = (lane % 2) * 8;
  // Unrolled like every loop over o_acc: an array of fragments indexed at run
  // time would leave registers for memory.
  FRAG_UNROLL for (uint n = 0; n < D16; ++n) {
    frag_store_c(o_acc[n], scratch, FLASH_SCRATCH_STRIDE);
    warp_barrier();
    const uint col = n * FLASH_FRAG + half_col;
    if (qi < pc.seq_len && col < D) {  // padded columns are not the output's
      const uint h = head0 + row % HEAD_GROUP;
      text_write_row(b, split, qi, h, col / 4, uintBitsToFloat(tile_pool[at]), row_max, row_sum);
      text_write_row(b, split, qi, h, col / 4 + 1, uintBitsToFloat(tile_pool[at + 1]), row_max, row_sum);
    }
    warp_barrier();
  }
}

#version 450
// Flash-decoding on tensor cores with K/V streamed through registers: the
// query heads of one KV head are the 8 columns of
// S^T = K Q^T and O^T = V^T P^T (mma.m16n8k16 shapes), so per 16-key tile a
// warp issues 16 matrix products and a handful of softmax instructions where
// a scalar kernel issues a dot product and a lane reduction per (head, key).
// One source, built twice: with GL_NV_cooperative_matrix
// (stream_fragment_coopmat.glsl), and with STREAM_EMULATED through a plain-GLSL
// layer of the same functions, which lavapipe runs in CI.
//
// A workgroup of NW warps owns one split of one (sequence, KV head, head
// group); the split's 16-key tiles (aligned on absolute key positions) go to
// its warps in turn, and the warps never wait for one another until the
// merge. Past 128 columns of the head dim two warps share each tile, each
// with half of the columns (STREAM_DIM_SPLIT): they add their halves of S^T
// through shared memory, the one point where they wait for each other, and
// each accumulates its half of O^T. A warp keeps the next tile's K/V words in
// flight in registers (16-byte loads) and stages them into its own shared
// rows, from which the fragments load (V transposed, which a load from memory
// could not do at full width). Its one staging area takes the tile's K, then,
// once the scores are out, its V: K of the next tile is issued as soon as K of
// this one is staged, V likewise, so each load has a round to land, and the
// area is half of a K-and-V one. Decode is bound by the bytes in flight, and
// those sit in registers: the shared memory saved is what lets a workgroup
// hold twice the warps at D128 in the 48 KiB an NVIDIA compute unit gives its
// workgroups. Keys it
// must not see arrive as zero rows and are masked. A tile whose 16 keys are
// all visible and lie in one run of rows (contiguous, or inside one page or
// ring turn, cold tier) forms each row's address from the first; others
// (the range's ends, page and ring boundaries, the hot tier, pools read by
// address) resolve each key's row.
//   per tile: S^T = K Q^T (f16 x f16 -> f32); scale, softcap, mask; per head
//   the tile's maximum over the 16 keys; online softmax in f32 (log2 units);
//   P^T rounded to f16; O^T = O^T diag(alpha) + V^T P^T.
// At the end the warps merge through shared memory and the workgroup writes
// the heads' rows, or with SPLIT un-normalised partials for
// text_split_reduce.comp, or for the row's last split to combine
// (text_split_combine.glsl).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable
#ifdef KV_BY_ADDRESS
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#endif

#include "text_attention_interface.h"
#include "stream_interface.h"
#include "text_common.glsl"

layout(constant_id = TEXT_SC_HEAD_DIM) const uint D = 128;  // a multiple of 16 per warp sharing a tile
layout(constant_id = TEXT_SC_WG_SIZE) const uint WG = 128;  // NW warps of 32
layout(constant_id = TEXT_SC_HEAD_GROUP) const uint HEAD_GROUP = 4;  // at most STREAM_HEADS
layout(constant_id = TEXT_SC_Q_TYPE) const uint Q_TYPE = DTYPE_F16;  // f32 or f16
layout(constant_id = TEXT_SC_KV_TYPE) const uint KV_TYPE = DTYPE_F16;
layout(constant_id = TEXT_SC_O_TYPE) const uint O_TYPE = DTYPE_F16;
layout(constant_id = TEXT_SC_LAYOUT) const uint LAYOUT = TEXT_LAYOUT_CONTIGUOUS;
layout(constant_id = TEXT_SC_SPLIT) const uint SPLIT = 0;

layout(local_size_x_id = TEXT_SC_WG_SIZE) in;

layout(std430, binding = TEXT_BIND_Q) readonly buffer QBuf { uvec4 q_words[]; };
layout(std430, binding = TEXT_BIND_O) writeonly buffer OBuf4 { uvec4 o_words4[]; };
layout(std430, binding = TEXT_BIND_O) writeonly buffer OBuf2 { uvec2 o_words2[]; };
layout(std430, binding = TEXT_BIND_PAGE_TABLE) readonly buffer PageTable { uint page_table[]; };
layout(std430, binding = TEXT_BIND_KV_LEN) readonly buffer KvLen { uint kv_len_buf[]; };
layout(std430, binding = TEXT_BIND_START_POS) readonly buffer StartPos { uint start_pos_buf[]; };
layout(std430, binding = TEXT_BIND_KV_START) readonly buffer KvStart { uint kv_start_buf[]; };
// Written by every split; read back by the last one (text_split_combine.glsl).
layout(std430, binding = TEXT_BIND_PARTIAL_O) coherent buffer PartialO { vec4 partial_o[]; };
layout(std430, binding = TEXT_BIND_PARTIAL_ML) coherent buffer PartialML { vec2 partial_ml[]; };

const uint NW = WG / FLASH_WARP;
const uint DS = STREAM_DIM_SPLIT(D);  // warps sharing each tile
const uint NT = NW / DS;              // tile walkers: groups of DS warps
const uint DW = D / DS;               // a warp's columns of the head dim
const uint D8 = D / 8;                // words of a Q row
const uint DW8 = DW / 8;              // words of a warp's part of a K/V row
const uint D4 = D / 4;                // vec4s of an output row
const uint DW4 = DW / 4;
const uint DW16 = DW / FLASH_FRAG;    // fragments across a warp's columns
const uint ROW_WORDS = STREAM_ROW_WORDS(D);        // of a staged Q row
const uint STAGE_ROW_WORDS = STREAM_ROW_WORDS(DW);  // of a staged K/V row part
const uint WARP_WORDS = STREAM_WARP_WORDS(D);
const uint Q_BASE = 0;
const uint WARPS_BASE = STREAM_HEADS * ROW_WORDS;
const uint EXCHANGE_BASE = WARPS_BASE + NW * WARP_WORDS;
const bool EXCHANGE_IN_Q = STREAM_EXCHANGE_IN_Q(NW, D);  // the first exchange slot in Q's staged rows
// The two S^T exchange slots, used by turns: the first in Q's rows where they
// hold it, else both in the exchange area.
const uint EXCHANGE_SLOT0 = EXCHANGE_IN_Q ? Q_BASE : EXCHANGE_BASE;
const uint EXCHANGE_SLOT1 = EXCHANGE_BASE + (EXCHANGE_IN_Q ? 0u : STREAM_EXCHANGE_SLOT_WORDS(NW));
const uint STAGE_CHUNKS = STREAM_KEYS * DW8 / FLASH_WARP;  // words of K (and of V) a lane stages per tile
const uint Q_LANE_WORDS = (STREAM_HEADS * D8 + WG - 1u) / WG;  // words of Q^T's staged rows a lane stages
const float NEG_INF = -1.0 / 0.0;
const float LOG2E = 1.4426950408889634;  // scores in log2 units: exp(x) = exp2(x log2(e))
const float LN2 = 0.6931471805599453;

shared uvec4 tile_pool[STREAM_SHARED_WORDS(NW, D)];
shared vec2 merge_ml[NT * STREAM_HEADS];  // per walker and head: running max (log2 units) and sum
// f32 Q keeps f32 precision as two f16 parts per element, 2^e (hi + lo), with
// one power of two e per head that brings its largest |q| well inside f16's
// range: S^T = (K hi^T + K lo^T) 2^e. bf16 Q is one part 2^e (its 8 bits of
// mantissa fit f16's 11), f16 Q one part with e = 0.
const bool Q_SCALED = Q_TYPE != DTYPE_F16;
const uint Q_PARTS = Q_TYPE == DTYPE_F32 ? 2u : 1u;
// bf16 K/V are staged as f16 times a power of two (f16_stage_shift, from
// the largest element of the warp's tile): K with a power per tile, undone on
// the tile's scores; V with one per warp that only grows (tiles of smaller
// values are staged at it), undone on O at the end, O rescaled where it grows.
const bool KV_SCALED = KV_TYPE == DTYPE_BF16;
shared uint q_max_bits[STREAM_HEADS];  // per head: the largest |q|, as f32 bits (ordered like the values)

#include "text_key_range.glsl"
#include "text_kv_addressing.glsl"
#include "text_row_write.glsl"
// The last split's merge borrows the staging words (text_split_combine.glsl).
#define COMBINE_POOL_VEC4S STREAM_SHARED_WORDS(NW, D)
void merge_lanes_put(uint i, vec4 v) { tile_pool[i] = floatBitsToUint(v); }
vec4 merge_lanes_get(uint i) { return uintBitsToFloat(tile_pool[i]); }
#include "text_split_combine.glsl"
#ifdef STREAM_EMULATED
#include "stream_fragment_emulated.glsl"
#else
#include "stream_fragment_coopmat.glsl"
#endif

// The K and V words of the warp's next tile (its columns), in flight in
// registers while it works on the staged one.
uvec4 k_next[STAGE_CHUNKS];
uvec4 v_next[STAGE_CHUNKS];
// With KV_SCALED in a tiered layout, which of those words came from the hot
// ring, which is f16 where the cold tier is bf16: a bit per word.
uint k_next_hot = 0u, v_next_hot = 0u;
// The warp's next tile: its index, whether the warp has it, and whether it
// is one run of visible rows (tile_one_run) from the K and V words k_word and
// v_word. Its K and V loads are issued apart (fetch_words), from this plan.
struct NextTile {
  uint t;
  bool have;
  bool run;
  uint k_word;
  uint v_word;
};
NextTile next_tile;
// Whether the staged tile is one run of visible rows: then no key of it needs a mask.
bool staged_run = false;
// Which of the DS parts of the head dim this warp holds: its first word of a row.
uint part_word = 0u;

// The visible keys of this workgroup's query, as absolute positions [lo, hi).
uint vis_lo, vis_hi;

// Whether key position `pos` is one this query sees and can read.
bool key_readable(uint b, uint pos) {
  uint outer, inner;
  return pos >= vis_lo && pos < vis_hi && kv_coords(b, pos, outer, inner);
}

// Whether the 16 keys from p0 are all visible and lie in one run of rows at
// the inner stride (contiguous, or inside one page or ring turn, cold tier,
// bound K/V): then each row's words are one multiply-add from the word
// offsets of the first K and V rows, with no page-table read per row.
bool tile_one_run(uint b, uint kvh, uint p0, out uint k_word, out uint v_word) {
  k_word = v_word = 0u;
#ifdef KV_BY_ADDRESS
  return false;
#else
  if (p0 < vis_lo || vis_hi < STREAM_KEYS || p0 > vis_hi - STREAM_KEYS) return false;
  if (kv_hot(p0 + STREAM_KEYS - 1u)) return false;
  // A ring turn or a page ends inside the tile.
  if (kv_slot_layout() != TEXT_LAYOUT_CONTIGUOUS && p0 % pc.capacity + STREAM_KEYS > pc.capacity) return false;
  KvRow row;
  if (!kv_row(b, p0, kvh, row)) return false;  // behind a bad page
  k_word = row.k / 8u;
  v_word = row.v / 8u;
  return true;
#endif
}

// Plans tile `t` (key positions 16t ..) as the warp's next; `have` false
// past the warp's last tile. Warp-uniform.
void plan_next(uint b, uint kvh, uint t, bool have) {
  next_tile.t = t;
  next_tile.have = have;
  next_tile.run = have && tile_one_run(b, kvh, t * STREAM_KEYS, next_tile.k_word, next_tile.v_word);
}

// Issues the loads of the next tile's K (is_k) or V words into k_next or
// v_next: keys this query must not see, or a tile the warp does not have,
// are zero rows. Warp-uniform.
void fetch_words(bool is_k, uint b, uint kvh) {
  const uint p0 = next_tile.t * STREAM_KEYS;
  const uint stride = (is_k ? pc.k_strides[1] : pc.v_strides[1]) / 8u;
  const uint first = is_k ? next_tile.k_word : next_tile.v_word;
  uint hot_bits = 0u;
  [[unroll]] for (uint a = 0; a < STAGE_CHUNKS; ++a) {
    const uint i = frag_lane() + a * FLASH_WARP;
    const uint r = i / DW8, w = part_word + i % DW8;
    uvec4 word = uvec4(0u);
    if (next_tile.run) {
      word = is_k ? k_words4[first + r * stride + w] : v_words4[first + r * stride + w];
    } else {
      KvRow row = kv_row_none();
      if (next_tile.have && p0 + r >= vis_lo && p0 + r < vis_hi && kv_row(b, p0 + r, kvh, row)) {
        word = kv_word4(is_k, row, w);
        if (row.hot) hot_bits |= 1u << a;
      }
    }
    if (is_k) k_next[a] = word;
    else v_next[a] = word;
  }
  if (is_k) k_next_hot = hot_bits;
  else v_next_hot = hot_bits;
}

// With KV_SCALED, fetched word a of K (is_k) or V as 8 floats: bf16, or f16
// from the hot ring.
void fetched_floats(bool is_k, uint a, out vec4 lo, out vec4 hi) {
  const bool hot = (((is_k ? k_next_hot : v_next_hot) >> a) & 1u) != 0u;
  unpack_words(hot ? DTYPE_F16 : DTYPE_BF16, is_k ? k_next[a] : v_next[a], lo, hi);
}

// The fetched K (is_k) or V words into the warp's staging rows, once the
// warp's fragment loads from them are done. Every warp of the workgroup calls
// it the same number of times (the emulated layer's barriers are the workgroup's).
// With KV_SCALED the words are bf16 and staged as f16 times `scale`.
void put_words(bool is_k, uint stage, float scale) {
  warp_barrier();
  [[unroll]] for (uint a = 0; a < STAGE_CHUNKS; ++a) {
    const uint i = frag_lane() + a * FLASH_WARP;
    uvec4 word = is_k ? k_next[a] : v_next[a];
    if (KV_SCALED) {
      vec4 lo, hi;
      fetched_floats(is_k, a, lo, hi);
      word = pack_f16x8(lo * scale, hi * scale);
    }
    tile_pool[stage + (i / DW8) * STAGE_ROW_WORDS + i % DW8] = word;
  }
  if (is_k) staged_run = next_tile.run;
  warp_barrier();
}

// With KV_SCALED, the power of two that the warp's fetched K (is_k) or V
// words are divided by (f16_stage_shift). Warp-uniform; `scratch` for the
// emulated layer's warp_max.
int tile_shift(bool is_k, uint scratch) {
  float m = 0.0;
  [[unroll]] for (uint a = 0; a < STAGE_CHUNKS; ++a) {
    vec4 lo, hi;
    fetched_floats(is_k, a, lo, hi);
    m = max(m, abs_max8(lo, hi));
  }
  return f16_stage_shift(uintBitsToFloat(warp_max(floatBitsToUint(m), scratch)));
}

// log2 of the power of two that head h's Q rows are divided by (Q_SCALED):
// their largest |q| lands in [2^14, 2^15), far from f16's overflow and from
// its subnormals, so hi and lo keep 22 bits of each element that matters
// (bf16's 8 in one part).
int q_shift(uint h) {
  if (!Q_SCALED) return 0;
  const float m = uintBitsToFloat(q_max_bits[h]);
  if (isinf(m) || isnan(m) || m == 0.0) return 0;  // nothing to scale: the scores are inf, NaN or 0 anyway
  int e;
  frexp(m, e);  // 2^(e-1) <= m < 2^e
  return e - 15;
}

// One word (8 columns) of a Q row, read as floats (first: columns 0-3,
// second: 4-7), as f16: its part `part` of q 2^-shift (hi, or with Q_PARTS 2
// the rest lo = q 2^-shift - hi).
uvec4 q_part(vec4 first, vec4 second, uint part, int shift) {
  first = ldexp(first, ivec4(-shift));
  second = ldexp(second, ivec4(-shift));
  if (part == 1u) {
    const uvec4 hi = pack_f16x8(first, second);
    first -= vec4(unpackHalf2x16(hi.x), unpackHalf2x16(hi.y));
    second -= vec4(unpackHalf2x16(hi.z), unpackHalf2x16(hi.w));
  }
  return pack_f16x8(first, second);
}

void main() {
  const uint tid = gl_LocalInvocationIndex;
  const uint warp = tid / FLASH_WARP;
  const uint walker = warp / DS, part = warp % DS;
  part_word = part * DW8;
  const uint gqa = pc.num_heads / pc.num_kv_heads;
  const uint groups_per_kv = gqa / HEAD_GROUP;
  const uint kvh = gl_WorkGroupID.y / groups_per_kv;
  const uint head0 = kvh * gqa + (gl_WorkGroupID.y % groups_per_kv) * HEAD_GROUP;
  const uint b = gl_WorkGroupID.z / pc.num_splits;
  const uint split = gl_WorkGroupID.z % pc.num_splits;
  // Indirect dispatches may ask for more workgroups than the call has.
  if (b >= pc.batch || gl_WorkGroupID.x >= pc.seq_len || gl_WorkGroupID.y >= pc.num_kv_heads * groups_per_kv) return;

  const uint kv_len = (pc.flags & TEXT_FLAG_KV_LEN_BUFFER) != 0u ? kv_len_buf[b] : pc.kv_len;
  const uint start_pos = (pc.flags & TEXT_FLAG_START_POS_BUFFER) != 0u ? start_pos_buf[b] : pc.start_pos;
  const uint kv_start = (pc.flags & TEXT_FLAG_KV_START_BUFFER) != 0u ? kv_start_buf[b] : pc.kv_start;
  const uint qpos = text_query_pos(start_pos, 0u);
  kv_tier_begin(kv_len, kv_start);
  const uvec2 range = text_key_range(kv_len, kv_start, qpos, qpos, pc.window, (pc.flags & TEXT_FLAG_CAUSAL) != 0u,
                                     kv_slot_layout(), pc.capacity, pc.max_pages);
  // One query sees one run of keys: [vis_lo, vis_hi) is exactly what it sees.
  vis_lo = kv_start + range.x;
  vis_hi = kv_start + range.y;

  // This split's tiles [t_begin, t_stop) of the 16-aligned tiles covering the keys.
  const uint t_first = vis_lo / STREAM_KEYS;
  const uint n_tiles = range.y > range.x ? vis_hi / STREAM_KEYS + (vis_hi % STREAM_KEYS != 0u ? 1u : 0u) - t_first : 0u;
  const uint per_split = n_tiles / pc.num_splits + (n_tiles % pc.num_splits != 0u ? 1u : 0u);
  const uint t_begin = t_first + min(split * per_split, n_tiles);
  const uint t_stop = t_first + min(split * per_split + per_split, n_tiles);
  const uint rounds = (t_stop - t_begin + NT - 1u) / NT;

  // The warp's first tile is in flight while Q loads (two round trips to
  // memory overlapped, not one after the other: short decodes are latency).
  uint t = t_begin + walker;
  plan_next(b, kvh, t, t < t_stop);
  fetch_words(true, b, kvh);
  fetch_words(false, b, kvh);

  // Q^T: the heads' rows as f16 parts, heads past HEAD_GROUP zero. Each lane
  // reads its words of them once, all at once (as floats with Q_SCALED); with
  // Q_SCALED first each head's largest |q|, then (Q_PARTS 2) hi and lo in turn
  // through the same shared rows.
  vec4 q_first[Q_LANE_WORDS], q_second[Q_LANE_WORDS];
  uvec4 q_word[Q_LANE_WORDS];
  [[unroll]] for (uint a = 0; a < Q_LANE_WORDS; ++a) {
    const uint i = tid + a * WG, h = i / D8, w = i % D8;
    q_first[a] = q_second[a] = vec4(0.0);
    q_word[a] = uvec4(0u);
    if (h < HEAD_GROUP) {
      const uint row = q_row_elem(b, 0u, head0 + h);
      if (Q_SCALED) {
        ROW_FLOATS(q_words, Q_TYPE, row, w, q_first[a], q_second[a])
      } else {
        q_word[a] = F16_ROW_WORD(q_words, Q_TYPE, row, w);
      }
    }
  }
  if (Q_SCALED) {
    if (tid < STREAM_HEADS) q_max_bits[tid] = 0u;
    barrier();
    [[unroll]] for (uint a = 0; a < Q_LANE_WORDS; ++a) {
      const uint h = (tid + a * WG) / D8;
      if (h < HEAD_GROUP) atomicMax(q_max_bits[h], floatBitsToUint(abs_max8(q_first[a], q_second[a])));
    }
    barrier();
  }
  FragB q_frag[DW16], q_rest[DW16];
  [[unroll]] for (uint qp = 0; qp < Q_PARTS; ++qp) {
    [[unroll]] for (uint a = 0; a < Q_LANE_WORDS; ++a) {
      const uint i = tid + a * WG, h = i / D8, w = i % D8;
      if (i < STREAM_HEADS * D8)
        tile_pool[Q_BASE + h * ROW_WORDS + w] = Q_SCALED ? q_part(q_first[a], q_second[a], qp, q_shift(h)) : q_word[a];
    }
    barrier();
    FRAG_UNROLL for (uint c = 0; c < DW16; ++c) {
      if (qp == 0u) frag_load_bt(q_frag[c], Q_BASE + part_word + 2u * c, ROW_WORDS);
      else frag_load_bt(q_rest[c], Q_BASE + part_word + 2u * c, ROW_WORDS);
    }
    if (qp + 1u < Q_PARTS) barrier();  // every warp has its fragments of hi before lo replaces it
  }
  if (DS > 1 && EXCHANGE_IN_Q) barrier();  // every warp has its Q fragments before the exchange takes the rows

  const uint base = WARPS_BASE + warp * WARP_WORDS;
  const uint stage = base;  // K, then V, of the tile at hand
  const uint scratch = base + STREAM_KEYS * STAGE_ROW_WORDS;
  FragS o_acc[DW16];
  FRAG_UNROLL for (uint c = 0; c < DW16; ++c) frag_fill(o_acc[c], 0.0);
  // Per head of this invocation's two columns (frag_col_value): the running
  // maximum and the running sum of this invocation's weights (summed across
  // the column once, at the end).
  vec2 run_max = vec2(NEG_INF), run_sum = vec2(0.0);
  const float score_scale = pc.softcap > 0.0 ? pc.scale : pc.scale * LOG2E;
  // Per head of this invocation's two columns: the scale, times 2^e of the Q
  // parts. With KV_SCALED, 2^e joins each tile's K power instead: the raw
  // products sit near 2^28 and one factor 2^(e + k) takes them to the scores,
  // where 2^e and 2^k in turn could overflow (or underflow) between.
  const ivec2 q_shifts = ivec2(q_shift(frag_col(0)), q_shift(frag_col(1)));
  const vec2 col_scale = KV_SCALED ? vec2(score_scale) : score_scale * ldexp(vec2(1.0), q_shifts);
  int v_shift = F16_STAGE_SHIFT_NONE;  // KV_SCALED: O^T is held divided by 2^v_shift

  for (uint round = 0; round < rounds; ++round, t += NT) {
    const bool have = t < t_stop;
    const uint p0 = t * STREAM_KEYS;
    const int k_shift = KV_SCALED ? tile_shift(true, scratch) : 0;
    put_words(true, stage, ldexp(1.0, -k_shift));
    plan_next(b, kvh, t + NT, t + NT < t_stop);
    fetch_words(true, b, kvh);  // in flight while this tile is used
    FragS s;
    frag_fill(s, 0.0);
    FRAG_UNROLL for (uint c = 0; c < DW16; ++c) {
      FragA k_frag;
      frag_load_a(k_frag, stage + 2u * c, STAGE_ROW_WORDS);
      frag_mul_add(s, k_frag, q_frag[c]);
      if (Q_PARTS > 1u) frag_mul_add(s, k_frag, q_rest[c]);
    }
    if (KV_SCALED) {
      const vec2 unscale = ldexp(vec2(1.0), q_shifts + k_shift);  // before the exchange: each part has its own k
      [[unroll]] for (int i = 0; i < s.length(); ++i) s[i] *= frag_col_value(unscale, i);
    }
    if (DS > 1) {
      // The other part's scores added: both warps of the walker then hold the
      // same S^T (addition commutes), so their softmax agrees bit for bit. Two
      // slots by turns: a slot is rewritten only after the barrier of the next
      // round, which the partner passes after its read.
      const uint slot = round % 2u == 0u ? EXCHANGE_SLOT0 : EXCHANGE_SLOT1;
      uvec4 mine = uvec4(0u);
      [[unroll]] for (int i = 0; i < s.length(); ++i) mine[i] = floatBitsToUint(s[i]);
      tile_pool[slot + warp * FLASH_WARP + frag_lane()] = mine;
      barrier();
      const uvec4 other = tile_pool[slot + (warp ^ 1u) * FLASH_WARP + frag_lane()];
      [[unroll]] for (int i = 0; i < s.length(); ++i) s[i] += uintBitsToFloat(other[i]);
    }
    // Every key visible and readable: no per-key mask. A paged tile that is
    // not one run of rows is checked key by key (a key behind a bad page
    // entry is masked).
    const bool whole = staged_run || (have && p0 >= vis_lo && vis_hi >= STREAM_KEYS && p0 <= vis_hi - STREAM_KEYS &&
                                      kv_slot_layout() != TEXT_LAYOUT_PAGED);

    [[unroll]] for (int i = 0; i < s.length(); ++i) {
      float v = s[i] * frag_col_value(col_scale, i);
      if (pc.softcap > 0.0) v = pc.softcap * tanh(v / pc.softcap) * LOG2E;
      if (!whole && !(have && key_readable(b, p0 + frag_row(i)))) v = NEG_INF;
      s[i] = v;
    }
    const vec2 m_new = max(run_max, frag_cols_across(frag_lane_cols(s, true), scratch, true));
    // A head that has seen no key yet keeps alpha 1 (no -inf - -inf).
    const vec2 alpha = mix(exp2(run_max - m_new), vec2(1.0), equal(m_new, vec2(NEG_INF)));
    const bool moved = any(notEqual(alpha, vec2(1.0)));
    run_max = m_new;
    run_sum *= alpha;
    [[unroll]] for (int i = 0; i < s.length(); ++i) {
      const float m = frag_col_value(run_max, i);
      const float p = m == NEG_INF ? 0.0 : exp2(s[i] - m);
      s[i] = unpackHalf2x16(packHalf2x16(vec2(p, 0.0))).x;  // the sum takes the f16 weights P V uses
    }
    run_sum += frag_lane_cols(s, false);
    if (warp_any(moved)) {
      FRAG_UNROLL for (uint c = 0; c < DW16; ++c) {
        [[unroll]] for (int i = 0; i < o_acc[c].length(); ++i) o_acc[c][i] *= frag_col_value(alpha, i);
      }
    }
    FragB p_frag;
    frag_to_b(p_frag, s, scratch);
    if (KV_SCALED) {
      const int shift = max(v_shift, tile_shift(false, scratch));
      if (shift != v_shift) {  // warp-uniform: O^T moves to the larger power (from zeros at the first tile)
        const float down = f16_stage_rescale(v_shift, shift);
        FRAG_UNROLL for (uint c = 0; c < DW16; ++c) {
          [[unroll]] for (int i = 0; i < o_acc[c].length(); ++i) o_acc[c][i] *= down;
        }
        v_shift = shift;
      }
    }
    put_words(false, stage, KV_SCALED ? ldexp(1.0, -v_shift) : 1.0);
    fetch_words(false, b, kvh);
    FRAG_UNROLL for (uint c = 0; c < DW16; ++c) {
      FragA v_frag;
      frag_load_at(v_frag, stage + 2u * c, STAGE_ROW_WORDS);
      frag_mul_add(o_acc[c], v_frag, p_frag);
    }
  }
  run_sum = frag_cols_across(run_sum, scratch, false);

  // The walkers merge: each warp leaves its part of O^T (rows of 8 heads'
  // f32, per 16 columns of the head dim) in its staging words, and each
  // walker its (max, sum) per head (the same in both of its warps).
  if (KV_SCALED) {
    const float up = f16_stage_rescale(v_shift, 0);
    FRAG_UNROLL for (uint c = 0; c < DW16; ++c) {
      [[unroll]] for (int i = 0; i < o_acc[c].length(); ++i) o_acc[c][i] *= up;
    }
  }
  barrier();
  FRAG_UNROLL for (uint c = 0; c < DW16; ++c) frag_store(o_acc[c], base + c * FLASH_FRAG * 2u, 2u);
  if (part == 0u && frag_lane() < 4u) {
    merge_ml[walker * STREAM_HEADS + 2u * frag_lane()] = vec2(run_max.x, run_sum.x);
    merge_ml[walker * STREAM_HEADS + 2u * frag_lane() + 1u] = vec2(run_max.y, run_sum.y);
  }
  barrier();
  for (uint e = tid; e < HEAD_GROUP * D4; e += WG) {
    const uint h = e / D4, ci = e % D4;
    const uint holder = ci / DW4, cl = ci % DW4;  // the part holding column ci, and where in it
    float mm = NEG_INF;
    for (uint w = 0; w < NT; ++w) mm = max(mm, merge_ml[w * STREAM_HEADS + h].x);
    float ll = 0.0;
    vec4 o = vec4(0.0);
    for (uint w = 0; w < NT; ++w) {
      const vec2 ml = merge_ml[w * STREAM_HEADS + h];
      if (text_partial_empty(ml.x, ml.y)) continue;
      const float wgt = exp2(ml.x - mm);
      ll += ml.y * wgt;
      const uint at =
          WARPS_BASE + (w * DS + holder) * WARP_WORDS + (cl / 4u) * FLASH_FRAG * 2u + (cl % 4u) * 4u * 2u + h / 4u;
      [[unroll]] for (uint j = 0; j < 4u; ++j) o[j] += uintBitsToFloat(tile_pool[at + 2u * j][h % 4u]) * wgt;
    }
    text_write_row(b, split, 0u, head0 + h, ci, o, mm * LN2, ll);
  }
  text_split_combine(b, 0u, head0);
}

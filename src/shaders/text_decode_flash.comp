#version 450
// Flash-decoding at memory speed: K/V rows stream from memory in 16-byte words
// straight into registers, every workgroup keeps many of them in flight, and
// the query heads that share a KV head read each row once.
//
// Lanes: a group of KEY_LANES lanes of one subgroup owns one key at a time and
// splits its row into words of EPW elements (TEXT_FLASH_ELEMS_PER_WORD: 16
// bytes of f16/bf16 or f32; 16 int8 or int4 codes with their scale, 16 or 8
// bytes), WORDS_PER_LANE words per lane. A workgroup holds KEY_GROUPS such groups and
// walks its keys in steps of KEY_GROUPS x TILE_KEYS keys:
//   step 1: every lane loads its words of TILE_KEYS K and V rows (all loads of
//           the step are issued before any is used);
//   step 2: partial dot products for the HEAD_GROUP query heads, summed across
//           the key's lanes with a shuffle butterfly (every lane gets the sum);
//   step 3: online softmax update per head (running max m, sum l, rescaled acc).
// Then key groups merge: first inside a subgroup (shuffles), then across
// subgroups (shared memory), and the result is written, or, with SPLIT, left
// as a partial (m, l, acc) for text_split_reduce.comp or for the row's last
// split to combine (text_split_combine.glsl).
//
// With SPLIT the visible key range is cut into num_splits chunks of whole
// steps at run time, so a recording sized for a long cache replays correctly
// (and without wasted reads) at any shorter length read from a GPU buffer:
// splits past the end see no key and write an empty partial.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable
#ifdef KV_BY_ADDRESS
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#endif
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require

#include "text_attention_interface.h"
#include "text_common.glsl"

layout(constant_id = TEXT_SC_HEAD_DIM) const uint D = 128;
layout(constant_id = TEXT_SC_WG_SIZE) const uint WG = 256;
layout(constant_id = TEXT_SC_HEAD_GROUP) const uint HEAD_GROUP = 1;
layout(constant_id = TEXT_SC_TILE_KEYS) const uint TILE_KEYS = 4;
layout(constant_id = TEXT_SC_Q_TYPE) const uint Q_TYPE = DTYPE_F32;
layout(constant_id = TEXT_SC_KV_TYPE) const uint KV_TYPE = DTYPE_F16;
layout(constant_id = TEXT_SC_O_TYPE) const uint O_TYPE = DTYPE_F32;
layout(constant_id = TEXT_SC_LAYOUT) const uint LAYOUT = TEXT_LAYOUT_CONTIGUOUS;
layout(constant_id = TEXT_SC_SPLIT) const uint SPLIT = 0;
layout(constant_id = TEXT_SC_SUBGROUP_SIZE) const uint SG = 32;
layout(constant_id = TEXT_SC_KEY_LANES) const uint KEY_LANES = 16;
layout(constant_id = TEXT_SC_KV_GROUP) const uint KV_GROUP = 0;

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
#include "kv_quant.glsl"

const uint EPW = TEXT_FLASH_ELEMS_PER_WORD(KV_TYPE, D, LAYOUT == TEXT_LAYOUT_TIERED);  // elements per word
const uint PARTS = EPW / 4;                                         // vec4s of a word's values
const uint MAX_PARTS = 4;
// Quantized words of 16 codes (never in a tiered cache, whose hot rows are f16).
const bool WIDE_CODES = EPW == 16;
const uint ROW_WORDS = D / EPW;                                     // words per K/V row
const uint WORDS_PER_LANE = (ROW_WORDS + KEY_LANES - 1) / KEY_LANES;
const uint GROUPS_PER_SG = SG / KEY_LANES;
const uint KEY_GROUPS = WG / KEY_LANES;
const uint NSG = WG / SG;
const uint D4 = D / 4;
const float NEG_INF = -1.0 / 0.0;

shared vec4 merge_acc[TEXT_FLASH_MERGE_VEC4S(NSG, HEAD_GROUP, D)];
shared vec2 merge_ml[NSG * HEAD_GROUP];

#include "text_key_range.glsl"
#include "text_kv_addressing.glsl"
#include "text_row_write.glsl"
// The last split's merge borrows the merge area (text_split_combine.glsl).
#define COMBINE_POOL_VEC4S TEXT_FLASH_MERGE_VEC4S(NSG, HEAD_GROUP, D)
void merge_lanes_put(uint i, vec4 v) { merge_acc[i] = v; }
vec4 merge_lanes_get(uint i) { return merge_acc[i]; }
#include "text_split_combine.glsl"

// Elements e..e+EPW-1 of the Q row starting at element `row`, as PARTS vec4s.
void load_q(uint row, uint e, out vec4 x[MAX_PARTS]) {
  [[unroll]] for (uint p = 0; p < MAX_PARTS; ++p) x[p] = vec4(0.0);
  if (Q_TYPE == DTYPE_F32) {
    [[unroll]] for (uint p = 0; p < PARTS; ++p) x[p] = uintBitsToFloat(q_words[(row + e) / 4u + p]);
  } else {  // 16-bit Q comes with 16-bit or quantized K/V: whole 8-element words
    [[unroll]] for (uint p = 0; p < PARTS; p += 2) unpack_words(Q_TYPE, q_words[(row + e) / 8u + p / 2u], x[p], x[p + 1u]);
  }
}

// Word c of a K (is_k) or V row, loads only: an f16/bf16/f32 word (a tiered
// cache's hot rows are f16), or a unit of 8 codes with its scale in .z
// (kvq_load8), or 16 codes (kvq_load16) whose scale comes as `scale`.
struct KvWord {
  uvec4 word;
  uint scale;
};

KvWord load_word(bool is_k, KvRow row, uint c) {
  KvWord w = KvWord(uvec4(0u), 0u);
  if (!kv_quantized() || row.hot) {
    w.word = kv_word4(is_k, row, c);
  } else if (WIDE_CODES) {
    const uint e = (is_k ? row.k : row.v) + c * EPW;
    w.word = kvq_load16(is_k, e);
    w.scale = kvq_scale_bits(is_k, e);
  } else {
    w.word = kvq_load8(is_k, (is_k ? row.k : row.v) + c * EPW);
  }
  return w;
}

// A loaded word's values, PARTS vec4s, and the factor they take: 16 codes
// come as codes with their scale as the factor, which then multiplies a dot
// product or a weight once per word rather than every code; other words come
// as values, with factor 1.
float word_values(bool hot, KvWord w, out vec4 x[MAX_PARTS]) {
  [[unroll]] for (uint p = 0; p < MAX_PARTS; ++p) x[p] = vec4(0.0);
  if (WIDE_CODES) {
    [[unroll]] for (uint p = 0; p < PARTS; ++p) x[p] = kvq_codes4(w.word, p);
    return kvq_scale_value(w.scale);
  }
  kv_unpack(kv_row_type(hot), w.word, x[0], x[1]);
  return 1.0;
}

// Sum over the KEY_LANES lanes of this lane's key group; every lane gets it.
float key_sum(float x) {
  [[unroll]] for (uint o = KEY_LANES / 2; o > 0; o /= 2) x += subgroupShuffleXor(x, o);
  return x;
}

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint sg = gl_SubgroupID;
  const uint lane = gl_SubgroupInvocationID;
  const uint key_lane = lane % KEY_LANES;
  const uint group = sg * GROUPS_PER_SG + lane / KEY_LANES;
  const uint gqa = pc.num_heads / pc.num_kv_heads;
  const uint groups_per_kv = gqa / HEAD_GROUP;
  const uint kvh = gl_WorkGroupID.y / groups_per_kv;
  const uint head0 = kvh * gqa + (gl_WorkGroupID.y % groups_per_kv) * HEAD_GROUP;
  const uint b = gl_WorkGroupID.z / pc.num_splits;
  const uint split = gl_WorkGroupID.z % pc.num_splits;
  if (b >= pc.batch || gl_WorkGroupID.x >= pc.seq_len || gl_WorkGroupID.y >= pc.num_kv_heads * groups_per_kv) return;
  const uint qi = gl_WorkGroupID.x;

  // The visible keys [lo, hi) of this query and of this split, whole steps each.
  const uint kv_len = (pc.flags & TEXT_FLAG_KV_LEN_BUFFER) != 0u ? kv_len_buf[b] : pc.kv_len;
  const uint start_pos = (pc.flags & TEXT_FLAG_START_POS_BUFFER) != 0u ? start_pos_buf[b] : pc.start_pos;
  const uint kv_start = (pc.flags & TEXT_FLAG_KV_START_BUFFER) != 0u ? kv_start_buf[b] : pc.kv_start;
  const uint qpos = text_query_pos(start_pos, qi);
  kv_tier_begin(kv_len, kv_start);
  uvec2 range = text_key_range(kv_len, kv_start, qpos, qpos, pc.window, (pc.flags & TEXT_FLAG_CAUSAL) != 0u, kv_slot_layout(),
                               pc.capacity, pc.max_pages);
  if (SPLIT != 0u) range = text_split_range_in_steps(range, split, pc.num_splits, KEY_GROUPS * TILE_KEYS);
  const uint lo = range.x, hi = range.y;

  // Q words of every head, pre-scaled.
  vec4 q[HEAD_GROUP][WORDS_PER_LANE][MAX_PARTS];
  [[unroll]] for (uint g = 0; g < HEAD_GROUP; ++g) {
    const uint row = q_row_elem(b, qi, head0 + g);
    [[unroll]] for (uint w = 0; w < WORDS_PER_LANE; ++w) {
      const uint c = key_lane + w * KEY_LANES;
      vec4 x[MAX_PARTS] = vec4[](vec4(0.0), vec4(0.0), vec4(0.0), vec4(0.0));
      if (c < ROW_WORDS) load_q(row, c * EPW, x);
      [[unroll]] for (uint p = 0; p < PARTS; ++p) q[g][w][p] = x[p] * pc.scale;
    }
  }

  float m[HEAD_GROUP], l[HEAD_GROUP];
  vec4 acc[HEAD_GROUP][WORDS_PER_LANE][MAX_PARTS];
  [[unroll]] for (uint g = 0; g < HEAD_GROUP; ++g) {
    m[g] = NEG_INF;
    l[g] = 0.0;
    [[unroll]] for (uint w = 0; w < WORDS_PER_LANE; ++w)
      [[unroll]] for (uint p = 0; p < PARTS; ++p) acc[g][w][p] = vec4(0.0);
  }

  // Step starts advance while keys remain (j0 + a whole step could pass 2^32).
  for (uint j0 = lo; j0 < hi; j0 += min(KEY_GROUPS * TILE_KEYS, hi - j0)) {
    // Step 1: every load of the step in flight together.
    KvWord kw[TILE_KEYS][WORDS_PER_LANE], vw[TILE_KEYS][WORDS_PER_LANE];
    bool ok[TILE_KEYS], hot[TILE_KEYS];
    [[unroll]] for (uint u = 0; u < TILE_KEYS; ++u) {
      const uint j = group + u * KEY_GROUPS;  // key offset inside the step
      KvRow row = kv_row_none();
      ok[u] = j < hi - j0 && kv_row(b, kv_start + j0 + j, kvh, row);
      hot[u] = row.hot;
      [[unroll]] for (uint w = 0; w < WORDS_PER_LANE; ++w) {
        const uint c = key_lane + w * KEY_LANES;
        const bool in_row = ok[u] && c < ROW_WORDS;
        const KvWord none = KvWord(uvec4(0u), 0u);
        kw[u][w] = in_row ? load_word(true, row, c) : none;
        vw[u][w] = in_row ? load_word(false, row, c) : none;
      }
    }
    // Step 2: scores of every head for the step's keys.
    float s[HEAD_GROUP][TILE_KEYS];
    [[unroll]] for (uint u = 0; u < TILE_KEYS; ++u) {
      vec4 k[WORDS_PER_LANE][MAX_PARTS];
      float k_factor[WORDS_PER_LANE];
      [[unroll]] for (uint w = 0; w < WORDS_PER_LANE; ++w) k_factor[w] = word_values(hot[u], kw[u][w], k[w]);
      [[unroll]] for (uint g = 0; g < HEAD_GROUP; ++g) {
        float d = 0.0;
        [[unroll]] for (uint w = 0; w < WORDS_PER_LANE; ++w) {
          float dw = 0.0;
          [[unroll]] for (uint p = 0; p < PARTS; ++p) dw += dot(q[g][w][p], k[w][p]);
          d += dw * k_factor[w];
        }
        s[g][u] = d;
      }
    }
    [[unroll]] for (uint g = 0; g < HEAD_GROUP; ++g)
      [[unroll]] for (uint u = 0; u < TILE_KEYS; ++u) {
        float sc = key_sum(s[g][u]);
        if (pc.softcap > 0.0) sc = pc.softcap * tanh(sc / pc.softcap);
        s[g][u] = ok[u] ? sc : NEG_INF;
      }
    // Step 3: online softmax per head.
    [[unroll]] for (uint g = 0; g < HEAD_GROUP; ++g) {
      float m_new = m[g];
      [[unroll]] for (uint u = 0; u < TILE_KEYS; ++u) m_new = max(m_new, s[g][u]);
      if (m_new == NEG_INF) continue;  // no visible key yet (uniform in the key group); NaN scores flow on
      const float alpha = exp(m[g] - m_new);
      l[g] *= alpha;
      [[unroll]] for (uint w = 0; w < WORDS_PER_LANE; ++w)
        [[unroll]] for (uint p = 0; p < PARTS; ++p) acc[g][w][p] *= alpha;
      m[g] = m_new;
    }
    [[unroll]] for (uint u = 0; u < TILE_KEYS; ++u) {
      vec4 v[WORDS_PER_LANE][MAX_PARTS];
      float v_factor[WORDS_PER_LANE];
      [[unroll]] for (uint w = 0; w < WORDS_PER_LANE; ++w) v_factor[w] = word_values(hot[u], vw[u][w], v[w]);
      [[unroll]] for (uint g = 0; g < HEAD_GROUP; ++g) {
        const float weight = text_softmax_weight(s[g][u], m[g]);
        l[g] += weight;
        [[unroll]] for (uint w = 0; w < WORDS_PER_LANE; ++w) {
          const float wv = weight * v_factor[w];
          [[unroll]] for (uint p = 0; p < PARTS; ++p) acc[g][w][p] += wv * v[w][p];
        }
      }
    }
  }

  // Merge the key groups of each subgroup: a butterfly over the lane bits above
  // the key lanes, so the key group of lanes 0..KEY_LANES-1 ends with the sum.
  [[unroll]] for (uint o = KEY_LANES; o < SG; o *= 2) {
    [[unroll]] for (uint g = 0; g < HEAD_GROUP; ++g) {
      const float mo = subgroupShuffleXor(m[g], o);
      const float lo_ = subgroupShuffleXor(l[g], o);
      const float mm = max(m[g], mo);
      const float wa = text_partial_empty(m[g], l[g]) ? 0.0 : exp(m[g] - mm);
      const float wb = text_partial_empty(mo, lo_) ? 0.0 : exp(mo - mm);
      l[g] = l[g] * wa + lo_ * wb;
      m[g] = mm;
      [[unroll]] for (uint w = 0; w < WORDS_PER_LANE; ++w)
        [[unroll]] for (uint p = 0; p < PARTS; ++p)
          acc[g][w][p] = acc[g][w][p] * wa + subgroupShuffleXor(acc[g][w][p], o) * wb;
    }
  }
  // Then the subgroups, through shared memory.
  if (lane < KEY_LANES) {
    [[unroll]] for (uint g = 0; g < HEAD_GROUP; ++g) {
      if (lane == 0u) merge_ml[sg * HEAD_GROUP + g] = vec2(m[g], l[g]);
      [[unroll]] for (uint w = 0; w < WORDS_PER_LANE; ++w) {
        const uint c = key_lane + w * KEY_LANES;
        if (c >= ROW_WORDS) continue;
        const uint at = (sg * HEAD_GROUP + g) * D4 + c * PARTS;
        [[unroll]] for (uint p = 0; p < PARTS; ++p) merge_acc[at + p] = acc[g][w][p];
      }
    }
  }
  barrier();
  for (uint e = tid; e < HEAD_GROUP * D4; e += WG) {
    const uint g = e / D4, ci = e % D4;
    float mm = NEG_INF;
    for (uint s = 0; s < NSG; ++s) mm = max(mm, merge_ml[s * HEAD_GROUP + g].x);
    float ll = 0.0;
    vec4 o = vec4(0.0);
    for (uint s = 0; s < NSG; ++s) {
      const vec2 ml = merge_ml[s * HEAD_GROUP + g];
      if (text_partial_empty(ml.x, ml.y)) continue;
      const float wgt = exp(ml.x - mm);
      ll += ml.y * wgt;
      o += merge_acc[(s * HEAD_GROUP + g) * D4 + ci] * wgt;
    }
    text_write_row(b, split, qi, head0 + g, ci, o, mm, ll);
  }
  text_split_combine(b, qi, head0);
}

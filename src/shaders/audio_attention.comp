#version 450
// Conformer block-local attention (Gemma 3n / Gemma 4 audio), semantics as in
// include/vkattn/audio.hpp and the oracle src/reference/audio_reference.cpp.
//
// One workgroup per (frame t_q, head). Query r = t_q mod W of block u = t_q / W
// sees the context keys t_k in [uW - P, uW + W + F) that lie in [0, T) and
// satisfy -F <= t_q - t_k <= past_reach, which is one contiguous range
// [lo, hi). The kernel reads the unpadded Q, K, V [T, H, D] directly (no padded
// copies: out-of-range context slots are simply never visited) and walks that
// range in tiles of TILE keys:
//   step 1: logit z = q~ . (k * k_factor) + q~ . R[t_k - t_q + P], soft-capped;
//   step 2: online softmax (running max, sum, rescale);
//   step 3: rescale the output slice and add p . v.
// A frame with an empty range writes zeros.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable

#include "audio_interface.h"
#include "text_common.glsl"

layout(constant_id = AUDIO_SC_HEAD_DIM) const uint D = 128;
layout(constant_id = AUDIO_SC_WG_SIZE) const uint WG = 64;
layout(constant_id = AUDIO_SC_TILE) const uint TK = 32;
layout(constant_id = AUDIO_SC_IN_TYPE) const uint IN_TYPE = DTYPE_F32;
layout(constant_id = AUDIO_SC_OUT_TYPE) const uint OUT_TYPE = DTYPE_F32;
layout(constant_id = AUDIO_SC_ACC_CHUNKS) const uint ACC_CHUNKS = 1;

layout(local_size_x_id = AUDIO_SC_WG_SIZE) in;

layout(std430, binding = AUDIO_BIND_Q) readonly buffer QBuf { uvec4 q_words[]; };
layout(std430, binding = AUDIO_BIND_K) readonly buffer KBuf { uvec4 k_words[]; };
layout(std430, binding = AUDIO_BIND_V) readonly buffer VBuf { uvec4 v_words[]; };
layout(std430, binding = AUDIO_BIND_PER_DIM_SCALE) readonly buffer Pds { vec4 per_dim_scale[]; };
layout(std430, binding = AUDIO_BIND_REL_POS) readonly buffer RBuf { uvec4 r_words[]; };
layout(std430, binding = AUDIO_BIND_O) writeonly buffer OBuf4 { uvec4 o_words4[]; };
layout(std430, binding = AUDIO_BIND_O) writeonly buffer OBuf2 { uvec2 o_words2[]; };

const uint D4 = D / 4;
const uint EPW = IN_TYPE == DTYPE_F32 ? 4u : 8u;  // elements per uvec4 word
const uint WORDS_PER_ROW = D / EPW;
const float NEG_INF = -1.0 / 0.0;

shared vec4 q_s[D4];  // q~ = q * D^-1/2 / ln 2 * softplus(per_dim_scale)
shared float p_s[TK];
shared float run_max, run_sum, run_alpha;

// log(1 + e^x) without overflow, and without losing e^x where it is tiny.
vec4 softplus(vec4 x) {
  vec4 e = exp(-abs(x));
  vec4 small = e * (1.0 - 0.5 * e);  // log1p(e) for e < 1e-3 to f32 precision
  return max(x, vec4(0.0)) + mix(log(1.0 + e), small, lessThan(e, vec4(1e-3)));
}

// q~ . x over one row of K (pre-scaled by k_factor) or R starting at word `base`.
float dot_row(bool is_k, uint base) {
  float s = 0.0;
  [[unroll]] for (uint w = 0; w < WORDS_PER_ROW; ++w) {
    vec4 lo, hi;
    unpack_words(IN_TYPE, is_k ? k_words[base + w] : r_words[base + w], lo, hi);
    if (IN_TYPE == DTYPE_F32) {
      s += dot(q_s[w], lo);
    } else {
      s += dot(q_s[2u * w], lo) + dot(q_s[2u * w + 1u], hi);
    }
  }
  return s;
}

vec4 v_chunk(uint base, uint c) {
  vec4 lo, hi;
  unpack_words(IN_TYPE, v_words[base + (IN_TYPE == DTYPE_F32 ? c : c / 2u)], lo, hi);
  return (IN_TYPE == DTYPE_F32 || (c & 1u) == 0u) ? lo : hi;
}

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint tq = gl_WorkGroupID.x;
  const uint h = gl_WorkGroupID.y;
  const int T = int(pc.frames), W = int(pc.chunk), P = int(pc.max_past), F = int(pc.max_future);
  const int block_start = (int(tq) / W) * W;
  const int lo = max(max(0, block_start - P), int(tq) - pc.past_reach);
  const int hi = min(min(T, block_start + W + F), int(tq) + F + 1);

  for (uint c = tid; c < D4; c += WG) {
    const uint row = (tq * pc.heads + h) * WORDS_PER_ROW;
    vec4 lo4, hi4;
    unpack_words(IN_TYPE, q_words[row + (IN_TYPE == DTYPE_F32 ? c : c / 2u)], lo4, hi4);
    vec4 qv = (IN_TYPE == DTYPE_F32 || (c & 1u) == 0u) ? lo4 : hi4;
    q_s[c] = qv * pc.q_base * softplus(per_dim_scale[c]);
  }
  if (tid == 0u) {
    run_max = NEG_INF;
    run_sum = 0.0;
  }
  vec4 acc[ACC_CHUNKS];
  [[unroll]] for (uint a = 0; a < ACC_CHUNKS; ++a) acc[a] = vec4(0.0);

  for (int t0 = lo; t0 < hi; t0 += int(TK)) {
    barrier();  // q_s is written / the previous tile is no longer read
    // Step 1: logits, one key per invocation.
    for (uint j = tid; j < TK; j += WG) {
      const int tk = t0 + int(j);
      float z = NEG_INF;
      if (tk < hi) {
        const uint s = uint(tk - int(tq) + P);  // relative-position row, in [0, P + F]
        z = pc.k_factor * dot_row(true, (uint(tk) * pc.heads + h) * WORDS_PER_ROW) +
            dot_row(false, (s * pc.heads + h) * WORDS_PER_ROW);
        if (pc.logit_cap > 0.0) z = pc.logit_cap * tanh(z / pc.logit_cap);
      }
      p_s[j] = z;
    }
    barrier();
    // Step 2: online softmax over the tile (TILE is small: one invocation).
    if (tid == 0u) {
      float m_new = run_max;
      for (uint j = 0; j < TK; ++j) m_new = max(m_new, p_s[j]);
      float total = 0.0;
      for (uint j = 0; j < TK; ++j) {
        float p = exp(p_s[j] - m_new);
        p_s[j] = p;
        total += p;
      }
      run_alpha = exp(run_max - m_new);
      run_sum = run_sum * run_alpha + total;
      run_max = m_new;
    }
    barrier();
    // Step 3: accumulate this invocation's slice of the output row.
    const uint keys = uint(min(int(TK), hi - t0));
    [[unroll]] for (uint a = 0; a < ACC_CHUNKS; ++a) {
      uint c = tid + a * WG;
      if (c < D4) {
        vec4 o = acc[a] * run_alpha;
        for (uint j = 0; j < keys; ++j) o += p_s[j] * v_chunk((uint(t0) + j) * pc.heads * WORDS_PER_ROW + h * WORDS_PER_ROW, c);
        acc[a] = o;
      }
    }
  }
  barrier();

  [[unroll]] for (uint a = 0; a < ACC_CHUNKS; ++a) {
    uint c = tid + a * WG;
    if (c >= D4) continue;
    vec4 o = run_sum > 0.0 ? acc[a] / run_sum : vec4(0.0);
    uvec4 w = pack_vec4(OUT_TYPE, o);
    uint chunk = (tq * pc.heads + h) * D4 + c;
    if (OUT_TYPE == DTYPE_F32) o_words4[chunk] = w;
    else o_words2[chunk] = w.xy;
  }
}

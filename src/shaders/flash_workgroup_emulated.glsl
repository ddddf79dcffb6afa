// flash_workgroup.comp's matrix layer in plain GLSL, for devices without
// GL_NV_cooperative_matrix2 (lavapipe in CI): the same operations as
// flash_workgroup_coopmat2.glsl on per-invocation arrays. Element e of
// invocation i of an R x C matrix is the flat, row-major index e * WG + i
// (FLASH_WG_EMULATED_POOL_FLOATS in flash_interface.h), so every matrix of one
// shape agrees on which element is where, as the real layer's types do.
// Products, row reductions and the store pass through a shared pool of
// floats; each such call begins with a barrier, so the pool's last readers
// are done. f16 operands are f32 values rounded to f16, as the real layer's
// conversions round them. Include after D, DP, BR, TK, WG, Q_TYPE, O_TYPE,
// the push constants and masked_score.

layout(std430, binding = TEXT_BIND_Q) readonly buffer QWords { uint q_words[]; };  // f16 pairs or f32 bits
layout(std430, binding = TEXT_BIND_K) readonly buffer KWords { uint k_words[]; };  // f16 pairs
layout(std430, binding = TEXT_BIND_V) readonly buffer VWords { uint v_words[]; };
layout(std430, binding = TEXT_BIND_O) writeonly buffer OWords { uint o_words[]; };  // f16 pairs or f32 bits

const uint WG_Q_ELEMS = BR * DP / WG;
const uint WG_KT_ELEMS = DP * TK / WG;
const uint WG_V_ELEMS = TK * DP / WG;
const uint WG_S_ELEMS = BR * TK / WG;
const uint WG_O_ELEMS = BR * DP / WG;

#define MatQ float[WG_Q_ELEMS]
#define MatKT float[WG_KT_ELEMS]
#define MatV float[WG_V_ELEMS]
#define MatP float[WG_S_ELEMS]
#define MatS float[WG_S_ELEMS]
#define MatO float[WG_O_ELEMS]

shared float wg_pool[FLASH_WG_EMULATED_POOL_FLOATS(BR, DP, TK)];

float wg_round_f16(float x) { return unpackHalf2x16(packHalf2x16(vec2(x, 0.0))).x; }
float wg_half(uint word, uint at) { return unpackHalf2x16(word)[at % 2u]; }
uint wg_flat(int e) { return uint(e) * WG + gl_LocalInvocationIndex; }

void wg_fill_s(out MatS m, float x) {
  for (int e = 0; e < m.length(); ++e) m[e] = x;
}
void wg_fill_o(out MatO m, float x) {
  for (int e = 0; e < m.length(); ++e) m[e] = x;
}

void wg_load_q(out MatQ q, uint base, uint q0) {
  for (int e = 0; e < q.length(); ++e) {
    const uint r = wg_flat(e) / DP, c = wg_flat(e) % DP, qi = q0 + r;
    q[e] = 0.0;
    if (qi >= pc.seq_len || c >= D) continue;
    const uint at = base + qi * pc.q_strides[1] + c;
    q[e] = wg_round_f16(Q_TYPE == DTYPE_F16 ? wg_half(q_words[at / 2u], at) : uintBitsToFloat(q_words[at]));
  }
}

// K^T of slots slot0 .. slot0 + TK - 1 (zeros from slot_end on): row = column of K.
void wg_load_kt(out MatKT kt, uint base, uint slot0, uint slot_end) {
  for (int e = 0; e < kt.length(); ++e) {
    const uint r = wg_flat(e) / TK, slot = slot0 + wg_flat(e) % TK;
    const uint at = base + slot * pc.k_strides[1] + r;
    kt[e] = slot < slot_end && r < D ? wg_half(k_words[at / 2u], at) : 0.0;
  }
}

void wg_load_v(out MatV v, uint base, uint slot0, uint slot_end) {
  for (int e = 0; e < v.length(); ++e) {
    const uint slot = slot0 + wg_flat(e) / DP, c = wg_flat(e) % DP;
    const uint at = base + slot * pc.v_strides[1] + c;
    v[e] = slot < slot_end && c < D ? wg_half(v_words[at / 2u], at) : 0.0;
  }
}

// Element (r, c) of the product of the pooled A (rows x inner, from pool[0])
// and B (inner x cols, right after A), for the two products below.
float wg_pooled_product(uint r, uint c, uint rows, uint inner, uint cols) {
  float sum = 0.0;
  for (uint k = 0; k < inner; ++k) sum += wg_pool[r * inner + k] * wg_pool[rows * inner + k * cols + c];
  return sum;
}

// S += Q K^T.
void wg_mul_add_s(inout MatS s, MatQ q, MatKT kt) {
  barrier();
  for (int e = 0; e < q.length(); ++e) wg_pool[wg_flat(e)] = q[e];
  for (int e = 0; e < kt.length(); ++e) wg_pool[BR * DP + wg_flat(e)] = kt[e];
  barrier();
  for (int e = 0; e < s.length(); ++e) s[e] += wg_pooled_product(wg_flat(e) / TK, wg_flat(e) % TK, BR, DP, TK);
}

// O += P V.
void wg_mul_add_o(inout MatO o, MatP p, MatV v) {
  barrier();
  for (int e = 0; e < p.length(); ++e) wg_pool[wg_flat(e)] = p[e];
  for (int e = 0; e < v.length(); ++e) wg_pool[BR * TK + wg_flat(e)] = v[e];
  barrier();
  for (int e = 0; e < o.length(); ++e) o[e] += wg_pooled_product(wg_flat(e) / DP, wg_flat(e) % DP, BR, TK, DP);
}

void wg_to_p(out MatP p, MatS s) {
  for (int e = 0; e < s.length(); ++e) p[e] = wg_round_f16(s[e]);
}

void wg_share_s(MatS s) {
  barrier();
  for (int e = 0; e < s.length(); ++e) wg_pool[wg_flat(e)] = s[e];
  barrier();
}

// Each element gets its row's maximum (sum).
float wg_pooled_row_fold(uint row, bool take_max) {
  float x = wg_pool[row * TK];
  for (uint c = 1u; c < TK; ++c) x = take_max ? max(x, wg_pool[row * TK + c]) : x + wg_pool[row * TK + c];
  return x;
}
void wg_row_max(out MatS r, MatS s) {
  wg_share_s(s);
  for (int e = 0; e < r.length(); ++e) r[e] = wg_pooled_row_fold(wg_flat(e) / TK, true);
}
void wg_row_sum(out MatS r, MatS s) {
  wg_share_s(s);
  for (int e = 0; e < r.length(); ++e) r[e] = wg_pooled_row_fold(wg_flat(e) / TK, false);
}
// A per-row value (held alike by every element of its row) across the O columns.
void wg_row_spread(out MatO r, MatS s) {
  wg_share_s(s);
  for (int e = 0; e < r.length(); ++e) r[e] = wg_pool[(wg_flat(e) / DP) * TK];
}

void wg_mask(inout MatS s) {
  for (int e = 0; e < s.length(); ++e) s[e] = masked_score(wg_flat(e) / TK, wg_flat(e) % TK, s[e]);
}

// Rows from q0 on up to seq_len, columns below D; f16 in pairs (D and the
// strides are even), as the real layer's clamped store writes them.
void wg_store_o(MatO o, uint base, uint q0) {
  barrier();
  for (int e = 0; e < o.length(); ++e) wg_pool[wg_flat(e)] = o[e];
  barrier();
  const uint per_row = O_TYPE == DTYPE_F16 ? D / 2u : D;
  for (uint i = gl_LocalInvocationIndex; i < BR * per_row; i += WG) {
    const uint r = i / per_row, qi = q0 + r;
    if (qi >= pc.seq_len) continue;
    const uint at = base + qi * pc.o_strides[1];
    if (O_TYPE == DTYPE_F16) {
      const uint c = 2u * (i % per_row);
      o_words[(at + c) / 2u] = packHalf2x16(vec2(wg_pool[r * DP + c], wg_pool[r * DP + c + 1u]));
    } else {
      o_words[at + i % per_row] = floatBitsToUint(wg_pool[r * DP + i % per_row]);
    }
  }
}

// flash_workgroup.comp's matrix layer on GL_NV_cooperative_matrix2:
// workgroup-scope matrices of any 16-multiple shape, loaded and stored by
// tensor addressing (row strides, slices, zeros outside), row reductions and
// element functions that know their element's row and column. Compiled only
// by a glslang that knows the extension (cmake: VKATTN_GLSLANG_COOPMAT2).
// Include after D, DP, BR, TK, Q_TYPE, O_TYPE and the push constants.
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_KHR_cooperative_matrix : enable
#extension GL_NV_cooperative_matrix2 : enable

layout(std430, binding = TEXT_BIND_Q) readonly buffer QHalves { float16_t q_halves[]; };
layout(std430, binding = TEXT_BIND_Q) readonly buffer QFloats { float q_floats[]; };
layout(std430, binding = TEXT_BIND_K) readonly buffer KHalves { float16_t k_halves[]; };
layout(std430, binding = TEXT_BIND_V) readonly buffer VHalves { float16_t v_halves[]; };
layout(std430, binding = TEXT_BIND_O) writeonly buffer OHalves { float16_t o_halves[]; };
layout(std430, binding = TEXT_BIND_O) writeonly buffer OFloats { float o_floats[]; };

#define MatQ coopmat<float16_t, gl_ScopeWorkgroup, BR, DP, gl_MatrixUseA>
#define MatKT coopmat<float16_t, gl_ScopeWorkgroup, DP, TK, gl_MatrixUseB>
#define MatV coopmat<float16_t, gl_ScopeWorkgroup, TK, DP, gl_MatrixUseB>
#define MatP coopmat<float16_t, gl_ScopeWorkgroup, BR, TK, gl_MatrixUseA>
#define MatS coopmat<float, gl_ScopeWorkgroup, BR, TK, gl_MatrixUseAccumulator>
#define MatO coopmat<float, gl_ScopeWorkgroup, BR, DP, gl_MatrixUseAccumulator>

const uint WG_CLAMP = gl_CooperativeMatrixClampModeConstantNV;  // zeros outside the dimensions

// Rows [0, rows) x columns [0, D) with a row stride: Q and O rows of one
// (sequence, head) are [seq_len, D], K/V rows of one (sequence, KV head)
// [slot_end, D].
tensorLayoutNV<2, WG_CLAMP> wg_rows(uint rows, uint row_stride) {
  tensorLayoutNV<2, WG_CLAMP> t = createTensorLayoutNV(2, WG_CLAMP);
  t = setTensorLayoutDimensionNV(t, rows, D);
  return setTensorLayoutStrideNV(t, row_stride, 1);
}

void wg_fill_s(out MatS m, float x) { m = MatS(x); }
void wg_fill_o(out MatO m, float x) { m = MatO(x); }

void wg_load_q(out MatQ q, uint base, uint q0) {
  const tensorLayoutNV<2, WG_CLAMP> t = sliceTensorLayoutNV(wg_rows(pc.seq_len, pc.q_strides[1]), q0, BR, 0, DP);
  if (Q_TYPE == DTYPE_F16) {
    coopMatLoadTensorNV(q, q_halves, base, t);
  } else {  // f32 rounded to f16 once
    coopmat<float, gl_ScopeWorkgroup, BR, DP, gl_MatrixUseA> qf;
    coopMatLoadTensorNV(qf, q_floats, base, t);
    q = MatQ(qf);
  }
}

// K^T of slots slot0 .. slot0 + TK - 1 (zeros from slot_end on).
void wg_load_kt(out MatKT kt, uint base, uint slot0, uint slot_end) {
  const tensorViewNV<2, false, 1, 0> transposed = createTensorViewNV(2, false, 1, 0);
  coopMatLoadTensorNV(kt, k_halves, base, sliceTensorLayoutNV(wg_rows(slot_end, pc.k_strides[1]), slot0, TK, 0, DP),
                      transposed);
}

void wg_load_v(out MatV v, uint base, uint slot0, uint slot_end) {
  coopMatLoadTensorNV(v, v_halves, base, sliceTensorLayoutNV(wg_rows(slot_end, pc.v_strides[1]), slot0, TK, 0, DP));
}

void wg_mul_add_s(inout MatS s, MatQ q, MatKT kt) { s = coopMatMulAdd(q, kt, s); }
void wg_mul_add_o(inout MatO o, MatP p, MatV v) { o = coopMatMulAdd(p, v, o); }
void wg_to_p(out MatP p, MatS s) { p = MatP(s); }

float wg_max2(const in float a, const in float b) { return max(a, b); }
float wg_add2(const in float a, const in float b) { return a + b; }
float wg_first(const in float a, const in float b) { return a; }
float wg_mask_element(const in uint row, const in uint col, const in float s) { return masked_score(row, col, s); }

// Each element gets its row's maximum (sum).
void wg_row_max(out MatS r, MatS s) { coopMatReduceNV(r, s, gl_CooperativeMatrixReduceRowNV, wg_max2); }
void wg_row_sum(out MatS r, MatS s) { coopMatReduceNV(r, s, gl_CooperativeMatrixReduceRowNV, wg_add2); }
// A per-row value (held alike by every element of its row) across the O columns.
void wg_row_spread(out MatO r, MatS s) { coopMatReduceNV(r, s, gl_CooperativeMatrixReduceRowNV, wg_first); }
void wg_mask(inout MatS s) { coopMatPerElementNV(s, s, wg_mask_element); }

void wg_store_o(MatO o, uint base, uint q0) {
  const tensorLayoutNV<2, WG_CLAMP> t = sliceTensorLayoutNV(wg_rows(pc.seq_len, pc.o_strides[1]), q0, BR, 0, DP);
  if (O_TYPE == DTYPE_F16) {
    coopMatStoreTensorNV(coopmat<float16_t, gl_ScopeWorkgroup, BR, DP, gl_MatrixUseAccumulator>(o), o_halves, base, t);
  } else {
    coopMatStoreTensorNV(o, o_floats, base, t);
  }
}

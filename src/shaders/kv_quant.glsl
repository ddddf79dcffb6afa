// Reading int8/int4 quantized K/V (kv_quant_interface.h) in the text kernels.
// Include after text_attention_interface.h and text_common.glsl, with D,
// KV_TYPE and KV_GROUP declared. It adds u32 views of the K/V bindings and the
// scale bindings; f16/bf16/f32 kernels never call into it (KV_TYPE is a
// specialization constant, so their code is unchanged).
//
// K/V rows are dense: element e of the cache (an element index, as the text
// kernels compute them) is in (token, KV head) row e / D, so its scale is
// scale_row * groups + (e % D) / KV_GROUP. The kernels load a unit of 8
// elements (the f16 word's worth) at a time: two u32 words of int8, one of int4.
#include "kv_quant_scale.glsl"

layout(std430, binding = TEXT_BIND_K) readonly buffer KQuant { uint k_codes[]; };
layout(std430, binding = TEXT_BIND_V) readonly buffer VQuant { uint v_codes[]; };
// The same codes 8 and 16 bytes at a time (8 int8 codes, or 16 int8 or int4
// codes, in one load).
layout(std430, binding = TEXT_BIND_K) readonly buffer KQuant2 { uvec2 k_codes2[]; };
layout(std430, binding = TEXT_BIND_V) readonly buffer VQuant2 { uvec2 v_codes2[]; };
layout(std430, binding = TEXT_BIND_K) readonly buffer KQuant4 { uvec4 k_codes4[]; };
layout(std430, binding = TEXT_BIND_V) readonly buffer VQuant4 { uvec4 v_codes4[]; };
layout(std430, binding = TEXT_BIND_K_SCALE) readonly buffer KScale { uint k_scale_words[]; };
layout(std430, binding = TEXT_BIND_V_SCALE) readonly buffer VScale { uint v_scale_words[]; };

bool kv_quantized() { return KV_TYPE == DTYPE_INT8 || KV_TYPE == DTYPE_INT4; }

const uint KVQ_LANES = KV_TYPE == DTYPE_INT4 ? KV_QUANT_INT4_LANES : KV_QUANT_INT8_LANES;
const uint KVQ_GROUPS = KV_GROUP == KV_QUANT_GROUP_ROW ? 1u : (D + KV_GROUP - 1u) / KV_GROUP;

uint kvq_scale_index(uint e) {
  return KV_GROUP == KV_QUANT_GROUP_ROW ? e / D : (e / D) * KVQ_GROUPS + (e % D) / KV_GROUP;
}

// The f16 bits of the scale of element e of K or V (two scales per u32 word).
uint kvq_scale_bits(bool is_k, uint e) {
  const uint si = kvq_scale_index(e);
  const uint w = is_k ? k_scale_words[si / 2u] : v_scale_words[si / 2u];
  return (w >> (16u * (si & 1u))) & 0xffffu;
}

// The raw words of the 8 elements at element e (a multiple of 8) of K or V,
// and their scale's f16 bits in .z: loads only, so a kernel can issue all of a
// step's loads before decoding any.
uvec4 kvq_load8(bool is_k, uint e) {
  uvec2 codes;
  if (KVQ_LANES == 4u) codes = is_k ? k_codes2[e / 8u] : v_codes2[e / 8u];  // rows start on 8-element units
  else codes = uvec2(is_k ? k_codes[e / 8u] : v_codes[e / 8u], 0u);
  return uvec4(codes, kvq_scale_bits(is_k, e), 0u);
}

// The codes of the 16 elements at element e (a multiple of 16) of K or V: 16
// bytes of int8, or 8 bytes of int4 in .xy. Their scale is one
// (kvq_scale_bits(is_k, e)): a scale group holds 32 elements.
uvec4 kvq_load16(bool is_k, uint e) {
  if (KVQ_LANES == 4u) return is_k ? k_codes4[e / 16u] : v_codes4[e / 16u];
  return uvec4(is_k ? k_codes2[e / 16u] : v_codes2[e / 16u], 0u, 0u);
}

// Codes 4p .. 4p + 3 of loaded code words. No int-to-float conversion (a
// quarter-rate instruction on NVIDIA GPUs): each code, made unsigned by
// flipping its sign bit, becomes the low mantissa bits of 2^23, and
// subtracting 2^23 and the flip's offset leaves the code, exactly.
vec4 kvq_codes4(uvec4 raw, uint p) {
  const uint bits = KVQ_LANES == 4u ? 8u : 4u;
  const uint flip = KVQ_LANES == 4u ? 0x80808080u : 0x88888888u;
  const uint word = raw[KVQ_LANES == 4u ? p : p / 2u] ^ flip;
  const uint first = KVQ_LANES == 4u ? 0u : 16u * (p % 2u);  // int4: codes 4p.. are the word's low or high half
  const float offset = 8388608.0 + float(1u << (bits - 1u));
  vec4 x;
  [[unroll]] for (uint k = 0; k < 4u; ++k)
    x[k] = uintBitsToFloat(0x4B000000u | bitfieldExtract(word, int(first + bits * k), int(bits))) - offset;
  return x;
}

// Decodes a unit from kvq_load8 into its 8 values.
void kvq_unpack8(uvec4 raw, out vec4 lo, out vec4 hi) {
  const float s = kvq_scale_value(raw.z);
  lo = kvq_codes4(raw, 0u) * s;  // .z, the scale, is no code word
  hi = kvq_codes4(raw, 1u) * s;
}

// A loaded word of a row stored as `type` (kv_row_type: a tiered cache's hot
// rows are f16), or a quantized unit from kvq_load8, as its 8 values (4 for f32).
void kv_unpack(uint type, uvec4 w, out vec4 lo, out vec4 hi) {
  if (type == DTYPE_INT8 || type == DTYPE_INT4) kvq_unpack8(w, lo, hi);
  else unpack_words(type, w, lo, hi);
}

// The 4 values at element e (a multiple of 4): one int8 word, or half an int4 word.
vec4 kvq_load4(bool is_k, uint e) {
  const float s = kvq_scale_value(kvq_scale_bits(is_k, e));
  const uint w = is_k ? k_codes[e / KVQ_LANES] : v_codes[e / KVQ_LANES];
  const uint first = KVQ_LANES == 4u ? 0u : e % 8u;  // int4: lanes 0-3 or 4-7 of the word
  const uint bits = 32u / KVQ_LANES;
  vec4 x;
  [[unroll]] for (uint i = 0; i < 4u; ++i) x[i] = float(bitfieldExtract(int(w), int(bits * (first + i)), int(bits)));
  return x * s;
}

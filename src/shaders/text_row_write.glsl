// The end of every text kernel, shared: column `ci` (a vec4) of query row
// (b, qi, h) leaves either as an un-normalised partial (acc, running max m,
// running sum l) of split `split` for text_split_reduce.comp or
// text_split_combine.glsl, or, without SPLIT, normalised and encoded in
// O_TYPE. Include after the O and partial bindings, SPLIT, O_TYPE, D4 and
// text_kv_addressing.glsl.
#include "text_partial_row.glsl"

// Column `ci` of output row (b, qi, h), already normalised.
void text_write_output(uint b, uint qi, uint h, uint ci, vec4 o) {
  const uvec4 w = pack_vec4(O_TYPE, o);
  const uint at = o_row_elem(b, qi, h) / 4u + ci;
  if (O_TYPE == DTYPE_F32) o_words4[at] = w;
  else o_words2[at] = w.xy;
}

void text_write_row(uint b, uint split, uint qi, uint h, uint ci, vec4 acc, float m, float l) {
  if (SPLIT != TEXT_SPLIT_NONE) {
    const uint row = text_partial_row(b, split, qi, h);
    partial_o[row * D4 + ci] = acc;
    if (ci == 0u) partial_ml[row] = vec2(m, l);
  } else {
    text_write_output(b, qi, h, ci, text_normalise(acc, l));
  }
}

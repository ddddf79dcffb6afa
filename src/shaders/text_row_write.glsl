// The end of every text kernel, shared: column `ci` (a vec4) of query row
// (b, qi, h) leaves either as an un-normalised partial (acc, running max m,
// running sum l) of split `split` for text_split_reduce.comp, or, without
// SPLIT, normalised and encoded in O_TYPE. Include after the O and partial
// bindings, SPLIT, O_TYPE, D4 and text_kv_addressing.glsl.
void text_write_row(uint b, uint split, uint qi, uint h, uint ci, vec4 acc, float m, float l) {
  if (SPLIT != 0u) {
    const uint row = ((b * pc.num_splits + split) * pc.seq_len + qi) * pc.num_heads + h;
    partial_o[row * D4 + ci] = acc;
    if (ci == 0u) partial_ml[row] = vec2(m, l);
  } else {
    const uvec4 w = pack_vec4(O_TYPE, text_normalise(acc, l));
    const uint at = o_row_elem(b, qi, h) / 4u + ci;
    if (O_TYPE == DTYPE_F32) o_words4[at] = w;
    else o_words2[at] = w.xy;
  }
}

// The partial row of split `split` of query row (b, qi, h): where the split
// kernels write it (text_row_write.glsl) and the reduce or the last split read
// it (text_partial_merge.glsl). Include after the push constants.
uint text_partial_row(uint b, uint split, uint qi, uint h) {
  return ((b * pc.num_splits + split) * pc.seq_len + qi) * pc.num_heads + h;
}

// Where tensors' rows live, shared by the text kernels. Include after the
// push constants (pc), LAYOUT and the page_table binding are declared.
// Offsets are in elements; strides are multiples of 8, so a row starts on a
// 16-byte word for every storage type.

// (outer, inner) of key position `pos` of sequence b: (sequence, slot) for
// contiguous and ring caches, (page, row) for paged ones. False behind a page
// entry outside the pool: that key is never read.
bool kv_coords(uint b, uint pos, out uint outer, out uint inner) {
  if (LAYOUT == TEXT_LAYOUT_PAGED) {
    uint page = page_table[b * pc.max_pages + pos / pc.capacity];
    outer = page;
    inner = pos % pc.capacity;
    return page < pc.num_pages;
  }
  outer = b;
  inner = LAYOUT == TEXT_LAYOUT_RING ? pos % pc.capacity : pos;
  return true;
}

uint k_row_elem(uint outer, uint inner, uint kvh) {
  return outer * pc.k_strides[0] + inner * pc.k_strides[1] + kvh * pc.k_strides[2];
}
uint v_row_elem(uint outer, uint inner, uint kvh) {
  return outer * pc.v_strides[0] + inner * pc.v_strides[1] + kvh * pc.v_strides[2];
}
uint q_row_elem(uint b, uint qi, uint h) { return b * pc.q_strides[0] + qi * pc.q_strides[1] + h * pc.q_strides[2]; }
uint o_row_elem(uint b, uint qi, uint h) { return b * pc.o_strides[0] + qi * pc.o_strides[1] + h * pc.o_strides[2]; }

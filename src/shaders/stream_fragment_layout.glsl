// Where the elements of a 16x8 f32 accumulator (FragS) sit, shared by both
// fragment layers of text_decode_stream.comp: mma.m16n8k16's layout, 4
// elements per invocation, 0-1 on row lane/4 and 2-3 on row lane/4 + 8,
// element i in column 2 (lane % 4) + (i & 1). The tensor-core layer checks once
// per device that the implementation's layout is this one
// (stream_layout_holds, DeviceCaps::coop_accumulator_quad); the emulated layer
// keeps the same layout, so the kernel's per-element code is one.
// Include after frag_lane() is defined.
uint frag_row(int i) { return frag_lane() / 4u + (uint(i) >> 1) * 8u; }
uint frag_col(int i) { return (frag_lane() % 4u) * 2u + (uint(i) & 1u); }

// Per-column values of an invocation's two columns: x for column
// 2 (lane % 4) (elements 0, 2), y for the next (elements 1, 3).
float frag_col_value(vec2 cols, int i) { return (i & 1) == 0 ? cols.x : cols.y; }

float frag_combine(float a, float b, bool is_max) { return is_max ? max(a, b) : a + b; }

// This invocation's elements combined per column: the maximum (is_max) or the sum.
vec2 frag_lane_cols(FragS s, bool is_max) {
  return vec2(frag_combine(s[0], s[2], is_max), frag_combine(s[1], s[3], is_max));
}

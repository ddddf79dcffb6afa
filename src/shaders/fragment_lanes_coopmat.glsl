// Shared by the tensor-core fragment layers (flash_fragment_coopmat.glsl,
// stream_fragment_coopmat.glsl): values combined across the lanes that hold
// one accumulator row or column, the warp's vote, and the check of an
// accumulator's layout. Include after the layer's FragC/FragS type, frag_row
// and frag_col (and GL_KHR_shader_subgroup_ballot).

// Whether any invocation of the warp passes `v` (warp-uniform result): one ballot.
bool warp_any(bool v) { return any(notEqual(subgroupBallot(v), uvec4(0))); }

// `v` combined (the maximum, or the sum) over the lanes whose index differs
// from this one's in the bits first, 2 first, ... below end: an xor
// butterfly, so every such lane ends with the same bits. Call from
// warp-uniform control flow.
vec2 lanes_combined(vec2 v, uint first, uint end, bool is_max) {
  [[unroll]] for (uint m = first; m < end; m *= 2) {
    const vec2 other = subgroupShuffleXor(v, m);
    v = is_max ? max(v, other) : v + other;
  }
  return v;
}

// Defines `bool NAME(uint scratch)`: whether the implementation lays out
// FRAG, a 16 x COLS f32 accumulator with ELEMS elements per invocation, as
// frag_row and frag_col say. A tile whose every element holds
// row * COLS + column is loaded from `scratch` (16 x COLS / 4 words) and
// compared. Call from uniform control flow (it has barriers).
#define DEFINE_LAYOUT_CHECK(NAME, FRAG, COLS, ELEMS)                                                   \
  bool NAME(uint scratch) {                                                                            \
    const uint words = (COLS) / 4;                                                                     \
    for (uint i = gl_LocalInvocationIndex; i < FLASH_FRAG * words; i += gl_WorkGroupSize.x) {          \
      const float at = float((i / words) * (COLS) + (i % words) * 4u);                                 \
      tile_pool[scratch + i] = floatBitsToUint(vec4(at, at + 1.0, at + 2.0, at + 3.0));                \
    }                                                                                                  \
    barrier();                                                                                         \
    FRAG index;                                                                                        \
    coopMatLoadNV(index, tile_pool, scratch, words, false);                                            \
    bool holds = index.length() == (ELEMS);                                                            \
    for (int i = 0; holds && i < index.length(); ++i) holds = uint(index[i]) == frag_row(i) * (COLS) + frag_col(i); \
    return subgroupMin(holds ? 1u : 0u) != 0u;                                                         \
  }

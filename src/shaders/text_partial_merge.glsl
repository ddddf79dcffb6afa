// Split partials merged by online rescaling, shared by the reduce dispatch
// (text_split_reduce.comp) and the last split's combine
// (text_split_combine.glsl): a running (max, sum, acc) per output column takes
// the partials of splits first, first + step, ... with PARTIAL_MERGE_LOADS of
// them in flight, since one load per split in turn costs a memory round trip
// each. The result agrees with a max pass first to rounding. Include after
// text_common.glsl, text_partial_row.glsl, WG, D4, the partial_o / partial_ml
// bindings readable, and merge_lanes_put / merge_lanes_get: 2 x WG vec4s of
// shared memory (partial_merge_lanes).

// Rounds of 8 where the includer does not set its own (the reduce, whose
// lanes already share the splits of each column).
#ifndef PARTIAL_MERGE_LOADS
#define PARTIAL_MERGE_LOADS 8u
#endif

struct PartialMerge {
  float m;  // running maximum (natural-log units); -inf before any key
  float l;  // running sum of the weights
  vec4 o;   // running weighted sum of the column
};

PartialMerge partial_merge_empty() { return PartialMerge(-1.0 / 0.0, 0.0, vec4(0.0)); }

// One more partial (m, l, o) into the running merge r. A split that saw no
// key changes nothing; a NaN sum reaches the result.
void partial_merge_add(inout PartialMerge r, float m, float l, vec4 o) {
  if (text_partial_empty(m, l)) return;
  const float m_new = max(r.m, m);
  const float keep = exp(r.m - m_new), w = exp(m - m_new);
  r.l = r.l * keep + l * w;
  r.o = r.o * keep + o * w;
  r.m = m_new;
}

// Column ci of query row (b, qi, h): the partials of splits first,
// first + step, ... below pc.num_splits, merged.
PartialMerge partial_merge_splits(uint b, uint qi, uint h, uint ci, uint first, uint step) {
  PartialMerge r = partial_merge_empty();
  for (uint s0 = first; s0 < pc.num_splits; s0 += PARTIAL_MERGE_LOADS * step) {
    vec2 ml[PARTIAL_MERGE_LOADS];
    vec4 po[PARTIAL_MERGE_LOADS];
    [[unroll]] for (uint u = 0; u < PARTIAL_MERGE_LOADS; ++u) {
      const uint row = text_partial_row(b, min(s0 + u * step, pc.num_splits - 1u), qi, h);  // past the end: skipped below
      ml[u] = partial_ml[row];
      po[u] = partial_o[row * D4 + ci];
    }
    [[unroll]] for (uint u = 0; u < PARTIAL_MERGE_LOADS; ++u) {
      if (s0 + u * step < pc.num_splits) partial_merge_add(r, ml[u].x, ml[u].y, po[u]);
    }
  }
  return r;
}

// Invocation tid (of WG) merges every `lanes`-th split from lane tid / columns
// of output column (h, ci), tid % columns; the lanes' merges then meet in
// shared memory, and invocations tid < columns return their column's whole
// merge (the others, their lane's). lanes <= WG / columns. Call from uniform
// control flow (it has a barrier).
PartialMerge partial_merge_lanes(uint b, uint qi, uint h, uint ci, uint columns, uint lanes) {
  const uint tid = gl_LocalInvocationIndex, lane = tid / columns;
  PartialMerge r = partial_merge_empty();
  if (lane < lanes) r = partial_merge_splits(b, qi, h, ci, lane, lanes);
  merge_lanes_put(tid, r.o);
  merge_lanes_put(WG + tid, vec4(r.m, r.l, 0.0, 0.0));
  barrier();
  if (tid < columns) {
    for (uint i = 1u; i < lanes; ++i) {
      const vec4 ml = merge_lanes_get(WG + tid + i * columns);
      partial_merge_add(r, ml.x, ml.y, merge_lanes_get(tid + i * columns));
    }
  }
  return r;
}

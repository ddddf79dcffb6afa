// With SPLIT == TEXT_SPLIT_LAST_COMBINES the splits of a row group need no
// reduce dispatch: each workgroup writes its partials, makes them visible to
// the device and counts itself in split_arrivals; the one that arrives last
// reads every split's partial, writes the normalised output and sets the
// count back to zero for the next call (the counters start zeroed, and every
// call leaves them so). It merges the same partials as text_split_reduce.comp,
// in one pass with online rescaling instead of a max pass first (the outputs
// agree to rounding). Include after text_row_write.glsl, with WG, D4,
// NEG_INF, and the partial bindings readable and coherent: the last
// workgroup reads what other compute units wrote, past its own cache.

layout(std430, binding = TEXT_BIND_SPLIT_ARRIVALS) coherent buffer SplitArrivals { uint split_arrivals[]; };

shared bool split_is_last;
const uint SPLIT_COMBINE_LOADS = 8u;

// Called by every invocation, in uniform control flow, once the workgroup's
// partials of `heads` heads from head0 of query row (b, qi) are written.
void text_split_combine(uint b, uint qi, uint head0, uint heads) {
  if (SPLIT != TEXT_SPLIT_LAST_COMBINES) return;
  const uint tid = gl_LocalInvocationIndex;
  const uint counter = (b * pc.seq_len + qi) * pc.num_heads + head0;
  memoryBarrierBuffer();  // this invocation's partials reach the device before the count
  barrier();
  if (tid == 0u) split_is_last = atomicAdd(split_arrivals[counter], 1u) == pc.num_splits - 1u;
  barrier();
  if (!split_is_last) return;
  memoryBarrierBuffer();  // the count read before the other splits' partials
  for (uint e = tid; e < heads * D4; e += WG) {
    const uint h = head0 + e / D4, ci = e % D4;
    float m = NEG_INF, l = 0.0;
    vec4 o = vec4(0.0);
    // SPLIT_COMBINE_LOADS splits' partials in flight at once, merged by online
    // rescaling: one serial load per split cost a memory round trip each.
    for (uint s0 = 0; s0 < pc.num_splits; s0 += SPLIT_COMBINE_LOADS) {
      vec2 ml[SPLIT_COMBINE_LOADS];
      vec4 po[SPLIT_COMBINE_LOADS];
      [[unroll]] for (uint u = 0; u < SPLIT_COMBINE_LOADS; ++u) {
        const uint row = text_partial_row(b, min(s0 + u, pc.num_splits - 1u), qi, h);  // past the end: skipped below
        ml[u] = partial_ml[row];
        po[u] = partial_o[row * D4 + ci];
      }
      [[unroll]] for (uint u = 0; u < SPLIT_COMBINE_LOADS; ++u) {
        if (s0 + u >= pc.num_splits || text_partial_empty(ml[u].x, ml[u].y)) continue;  // a split that saw no key
        const float m_new = max(m, ml[u].x);
        const float keep = exp(m - m_new), w = exp(ml[u].x - m_new);
        l = l * keep + ml[u].y * w;
        o = o * keep + po[u] * w;
        m = m_new;
      }
    }
    text_write_output(b, qi, h, ci, text_normalise(o, l));
  }
  if (tid == 0u) split_arrivals[counter] = 0u;
}

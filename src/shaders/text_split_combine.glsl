// With SPLIT == TEXT_SPLIT_LAST_COMBINES the splits of a row group need no
// reduce dispatch: each workgroup writes its partials, makes them visible to
// the device and counts itself in split_arrivals; the one that arrives last
// reads every split's partial, writes the normalised output and sets the
// count back to zero for the next call (the counters start zeroed, and every
// call leaves them so). It merges the partials as text_split_reduce.comp does
// (text_partial_merge.glsl). Include after text_row_write.glsl, with WG, D4,
// and the partial bindings readable and coherent: the last workgroup reads
// what other compute units wrote, past its own cache.
#include "text_partial_merge.glsl"

layout(std430, binding = TEXT_BIND_SPLIT_ARRIVALS) coherent buffer SplitArrivals { uint split_arrivals[]; };

shared bool split_is_last;

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
    const PartialMerge r = partial_merge_splits(b, qi, h, ci, 0u, 1u);
    text_write_output(b, qi, h, ci, text_normalise(r.o, r.l));
  }
  if (tid == 0u) split_arrivals[counter] = 0u;
}

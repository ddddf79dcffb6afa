// With SPLIT == TEXT_SPLIT_LAST_COMBINES the splits of a row group need no
// reduce dispatch: each workgroup writes its partials, makes them visible to
// the device and counts itself in split_arrivals; the one that arrives last
// reads every split's partial, writes the normalised output and sets the
// count back to zero for the next call (the counters start zeroed, and every
// call leaves them so). It merges the partials as text_split_reduce.comp does
// (text_partial_merge.glsl). Include after text_row_write.glsl, with WG, D4,
// HEAD_GROUP, and the partial bindings readable and coherent: the last
// workgroup reads what other compute units wrote, past its own cache.
//
// The includer lends the merge shared memory that is free once its partials
// are written: COMBINE_POOL_VEC4S vec4s, through merge_lanes_put and
// merge_lanes_get (text_partial_merge.glsl's partial_merge_lanes). Where
// TEXT_LAST_SPLIT_LANES says so, several invocations share each output
// column and their merges meet in that memory: long split lists are then
// read in parallel, not one by one.
#define PARTIAL_MERGE_LOADS TEXT_LAST_SPLIT_MERGE_LOADS
#include "text_partial_merge.glsl"

layout(std430, binding = TEXT_BIND_SPLIT_ARRIVALS) coherent buffer SplitArrivals { uint split_arrivals[]; };

shared bool split_is_last;

const uint COMBINE_COLUMNS = HEAD_GROUP * D4;

// Called by every invocation, in uniform control flow, once the workgroup's
// partials of the HEAD_GROUP heads from head0 of query row (b, qi) are written.
void text_split_combine(uint b, uint qi, uint head0) {
  if (SPLIT != TEXT_SPLIT_LAST_COMBINES) return;
  const uint tid = gl_LocalInvocationIndex;
  const uint counter = (b * pc.seq_len + qi) * pc.num_heads + head0;
  memoryBarrierBuffer();  // this invocation's partials reach the device before the count
  barrier();
  if (tid == 0u) split_is_last = atomicAdd(split_arrivals[counter], 1u) == pc.num_splits - 1u;
  barrier();
  if (!split_is_last) return;
  memoryBarrierBuffer();  // the count read before the other splits' partials
  const uint lanes = TEXT_LAST_SPLIT_LANES(WG, COMBINE_COLUMNS, COMBINE_POOL_VEC4S, pc.num_splits);
  if (lanes == 1u) {
    for (uint e = tid; e < COMBINE_COLUMNS; e += WG) {
      const uint h = head0 + e / D4, ci = e % D4;
      const PartialMerge r = partial_merge_splits(b, qi, h, ci, 0u, 1u);
      text_write_output(b, qi, h, ci, text_normalise(r.o, r.l));
    }
  } else {
    const uint e = tid % COMBINE_COLUMNS;
    const uint h = head0 + e / D4, ci = e % D4;
    const PartialMerge r = partial_merge_lanes(b, qi, h, ci, COMBINE_COLUMNS, lanes);
    if (tid < COMBINE_COLUMNS) text_write_output(b, qi, h, ci, text_normalise(r.o, r.l));
  }
  if (tid == 0u) split_arrivals[counter] = 0u;
}

// The shared arrays of vision_attention.comp for QN queries, head dim D and
// TILE keys per tile, in elements of their types: K/V tiles are f32 vec4s or
// packed f16 uvec2s (4 dims each), and the tiles of the precision a pipeline
// does not use shrink to one row. The shader declares its arrays with these
// and the planner's shared-memory budget sums the same bytes
// (VIS_TILE_SHARED_BYTES), so the two cannot drift.
#ifndef VKATTN_VISION_TILE_ARRAYS_H
#define VKATTN_VISION_TILE_ARRAYS_H

#define VIS_TILE_Q_VEC4S(qn, d) ((qn) * ((d) / 4))
#define VIS_TILE_K_WORDS(tile, d) ((tile) * ((d) / 4 + 1))  // one word of padding per key: another bank
#define VIS_TILE_V_WORDS(tile, d) ((tile) * ((d) / 4))
#define VIS_TILE_P_FLOATS(qn, tile) ((qn) * (tile))
// f32_tile / f16_tile: rows of the f32 and the f16 K/V tiles (one of them 1).
// Then row_max, row_sum and row_alpha: one float each per query.
#define VIS_TILE_SHARED_BYTES(qn, d, tile, f32_tile, f16_tile)                                          \
  (16 * (VIS_TILE_Q_VEC4S(qn, d) + VIS_TILE_K_WORDS(f32_tile, d) + VIS_TILE_V_WORDS(f32_tile, d)) +    \
   8 * (VIS_TILE_K_WORDS(f16_tile, d) + VIS_TILE_V_WORDS(f16_tile, d)) + 4 * VIS_TILE_P_FLOATS(qn, tile) + \
   12 * (qn))

#endif

// The shared arrays of text_attention.comp (the shared-tile engine) for ROWS
// query rows, head dim D and TK keys per tile, in elements of their types:
// the shader declares its arrays with these and the planner's shared-memory
// budget sums the same bytes (TEXT_TILE_SHARED_BYTES), so the two cannot drift.
#ifndef VKATTN_TEXT_TILE_ARRAYS_H
#define VKATTN_TEXT_TILE_ARRAYS_H

#define TEXT_TILE_Q_VEC4S(rows, d) ((rows) * ((d) / 4))
#define TEXT_TILE_K_VEC4S(tk, d) ((tk) * ((d) / 4 + 1))  // one vec4 of padding per key: another bank
#define TEXT_TILE_V_VEC4S(tk, d) ((tk) * ((d) / 4))
#define TEXT_TILE_P_FLOATS(rows, tk) ((rows) * (tk))
// Then one uint per key (key_pos) and four 4-byte values per row (row_pos,
// row_max, row_sum, row_alpha).
#define TEXT_TILE_SHARED_BYTES(rows, d, tk)                                                    \
  (16 * (TEXT_TILE_Q_VEC4S(rows, d) + TEXT_TILE_K_VEC4S(tk, d) + TEXT_TILE_V_VEC4S(tk, d)) + \
   4 * (TEXT_TILE_P_FLOATS(rows, tk) + (tk) + 4 * (rows)))

#endif

// Shared by text_decode_stream.comp, its fragment layers and src/planner: the
// tile geometry of the streamed-fragment decode engine, declared once.
// Fragments are FLASH_FRAG wide and held by FLASH_WARP invocations
// (flash_interface.h); words are FLASH_WORD_BYTES.
#ifndef VKATTN_STREAM_INTERFACE_H
#define VKATTN_STREAM_INTERFACE_H

#include "flash_interface.h"

// A tile is 16 keys: the rows of S^T = K Q^T (an m16n8k16 product).
#define STREAM_KEYS 16
// Query heads per workgroup at most: the 8 columns of S^T and of O^T.
#define STREAM_HEADS 8
// A staged row (Q, or a K/V row of a tile that cannot be read in place): the
// head dim in 8-element words, padded by one word against bank conflicts.
#define STREAM_ROW_WORDS(d) ((d) / 8 + 1)
// Per warp: its staged K and V tile, then 32 words of scratch (P^T on its way
// to the B operand, the emulated layer's column exchange).
#define STREAM_SCRATCH_WORDS 32
#define STREAM_WARP_WORDS(d) (2 * STREAM_KEYS * STREAM_ROW_WORDS(d) + STREAM_SCRATCH_WORDS)
// The workgroup: Q^T's rows, then each warp's words.
#define STREAM_SHARED_WORDS(warps, d) (STREAM_HEADS * STREAM_ROW_WORDS(d) + (warps) * STREAM_WARP_WORDS(d))
// Plus each warp's running max and sum per head for the final merge (vec2s).
#define STREAM_SHARED_BYTES(warps, d) (STREAM_SHARED_WORDS(warps, d) * FLASH_WORD_BYTES + (warps) * STREAM_HEADS * 8)

#endif

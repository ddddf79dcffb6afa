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
// Past 128 columns of the head dim a warp's fragments (O^T, Q^T and the next
// tile's words in flight) would pass 255 registers, so two warps share each
// tile, each with half of the head dim: they exchange their halves of the
// scores S^T and run the same softmax. The head dim must be a multiple of 16
// per warp.
#define STREAM_MAX_WARP_DIM 128
#define STREAM_DIM_SPLIT(d) ((d) > STREAM_MAX_WARP_DIM ? 2 : 1)
// A staged row (Q, or a K/V row of a tile that cannot be read in place): `d`
// columns in 8-element words, padded by one word against bank conflicts.
#define STREAM_ROW_WORDS(d) ((d) / 8 + 1)
// Per warp: one staged 16-key tile of its columns of the head dim (K, then V
// in the same rows), then 32 words of scratch (P^T on its way to the B
// operand, the emulated layer's column exchange). At the end the warp's part
// of O^T (2 words per column, 2 x d / STREAM_DIM_SPLIT(d)) fits in these words.
#define STREAM_SCRATCH_WORDS 32
#define STREAM_WARP_WORDS(d) (STREAM_KEYS * STREAM_ROW_WORDS((d) / STREAM_DIM_SPLIT(d)) + STREAM_SCRATCH_WORDS)
// Warps sharing tiles swap their halves of S^T: a word per lane and warp, in
// two slots used by turns. Once Q is in fragments its staged rows are free,
// and the first slot lives there where it fits: at D256 that is what lets
// 8 warps (4 tile walkers) fit 48 KiB instead of 6.
#define STREAM_EXCHANGE_SLOT_WORDS(warps) ((warps) * FLASH_WARP)
#define STREAM_EXCHANGE_IN_Q(warps, d) (STREAM_EXCHANGE_SLOT_WORDS(warps) <= STREAM_HEADS * STREAM_ROW_WORDS(d))
#define STREAM_EXCHANGE_WORDS(warps, d) \
  (STREAM_DIM_SPLIT(d) > 1 ? (STREAM_EXCHANGE_IN_Q(warps, d) ? 1 : 2) * STREAM_EXCHANGE_SLOT_WORDS(warps) : 0)
// The workgroup: Q^T's rows (the whole head dim), each warp's words, then the exchange.
#define STREAM_SHARED_WORDS(warps, d) \
  (STREAM_HEADS * STREAM_ROW_WORDS(d) + (warps) * STREAM_WARP_WORDS(d) + STREAM_EXCHANGE_WORDS(warps, d))
// Plus each warp's running max and sum per head for the final merge (vec2s).
#define STREAM_SHARED_BYTES(warps, d) (STREAM_SHARED_WORDS(warps, d) * FLASH_WORD_BYTES + (warps) * STREAM_HEADS * 8)

#endif

// Shared by flash_coopmat.comp, its fragment layers and src/planner: the tile
// geometry of the tensor-core flash engine, declared once. Bindings, push
// constants and dtype/layout codes are text_attention_interface.h's.
#ifndef VKATTN_FLASH_INTERFACE_H
#define VKATTN_FLASH_INTERFACE_H

// Fragments are 16x16 (f16 operands, f32 accumulators), held by 32 invocations
// (one subgroup on the tensor-core build); each such warp owns 16 query rows.
#define FLASH_FRAG 16
#define FLASH_WARP 32
// A head dim (a multiple of 8) padded to whole fragments; the padding is zeros.
#define FLASH_PADDED_DIM(d) (((d) + FLASH_FRAG - 1) / FLASH_FRAG * FLASH_FRAG)
// Shared memory is addressed in 16-byte words (8 f16 or 4 f32). Staged rows are
// padded by one word so the 16 rows a fragment load touches start in different
// banks.
#define FLASH_WORD_BYTES 16
#define FLASH_ROW_PAD_WORDS 1
// Each warp has FLASH_FRAG rows of FLASH_SCRATCH_STRIDE words of scratch: a
// 16x16 f32 tile (row reductions off the fast path, P's exchange in the
// emulated layer, the output on its way out), its rows padded by one word.
#define FLASH_SCRATCH_STRIDE (FLASH_FRAG / 4 + FLASH_ROW_PAD_WORDS)
// Per query row: its position; per key of each K/V buffer: its position.
#define FLASH_ROW_STATE_BYTES 4
#define FLASH_KEY_STATE_BYTES 4
// Per workgroup: the largest |k| and |v| of the tiles of two parities (bf16
// staged as f16 times a power of two), four u32.
#define FLASH_TILE_STATE_BYTES 16

// flash_workgroup.comp: BR query rows x TK keys per step over a head dim
// padded to DP. Its emulated matrix layer (flash_workgroup_emulated.glsl)
// holds element e of invocation i of an R x C matrix at flat index
// e * WG + i, so R x C must be a multiple of the workgroup size, and passes
// each product's two operands through shared memory as floats.
#define FLASH_WG_EMULATED_POOL_FLOATS(br, dp, tk) \
  ((br) * (dp) + (dp) * (tk) > (br) * (tk) + (tk) * (dp) ? (br) * (dp) + (dp) * (tk) : (br) * (tk) + (tk) * (dp))

#endif

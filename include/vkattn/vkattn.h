/* vkattn's C API: for runtimes written in C, Rust, C#, Go or Zig.
 *
 * Opaque handles, plain structs, and a status code from every call; when a
 * call fails, vkattn_last_error() returns its message (naming the parameter,
 * the expected and the actual value) for the calling thread. The handles
 * follow the C++ API (vkattn/vkattn.hpp) one to one, and so do its threading
 * rules: a context may be shared by threads that each use their own recorder. */
#ifndef VKATTN_H
#define VKATTN_H

#include <stddef.h>
#include <stdint.h>
#include <vulkan/vulkan.h>

#include "vkattn/export.hpp"

#ifdef __cplusplus
extern "C" {
#endif

/* The same order as vkattn::ErrorKind, after VKATTN_OK. */
typedef enum vkattn_status {
  VKATTN_OK = 0,
  VKATTN_INVALID_ARGUMENT = 1, /* a parameter is out of its contract; the message names it */
  VKATTN_UNSUPPORTED = 2,      /* valid input the device or variant cannot run */
  VKATTN_NO_DEVICE = 3,        /* no Vulkan loader or no usable device */
  VKATTN_OUT_OF_MEMORY = 4,
  VKATTN_DEVICE_LOST = 5,
  VKATTN_VULKAN = 6, /* any other failing VkResult */
  VKATTN_IO = 7,
  VKATTN_INTERNAL = 8 /* an unexpected exception inside vkattn */
} vkattn_status;

/* The input enums end with a *_MAX_ENUM of 0x7fffffff (as Vulkan's do) so
 * that any int a caller stores in one is a value of its type, which C++ may
 * otherwise read as undefined behaviour; the library rejects every value past
 * the last named one with VKATTN_INVALID_ARGUMENT. */

/* The same order as vkattn::DType. */
typedef enum vkattn_dtype {
  VKATTN_F32 = 0,
  VKATTN_F16 = 1,
  VKATTN_BF16 = 2,
  VKATTN_U32 = 3,
  VKATTN_I8 = 4,
  VKATTN_I4 = 5,
  VKATTN_DTYPE_MAX_ENUM = 0x7fffffff
} vkattn_dtype;

/* The same order as vkattn::KvLayout. Tiered: a hot f16 ring over a cold tier
 * laid out as vkattn_text_params.cold_layout (see docs/data-contract.md). */
typedef enum vkattn_kv_layout {
  VKATTN_KV_CONTIGUOUS = 0,
  VKATTN_KV_RING = 1,
  VKATTN_KV_PAGED = 2,
  VKATTN_KV_TIERED = 3,
  VKATTN_KV_LAYOUT_MAX_ENUM = 0x7fffffff
} vkattn_kv_layout;
typedef enum vkattn_vision_layout {
  VKATTN_VISION_PHD = 0,
  VKATTN_VISION_HPD = 1,
  VKATTN_VISION_LAYOUT_MAX_ENUM = 0x7fffffff
} vkattn_vision_layout;

typedef struct vkattn_context_t* vkattn_context;
typedef struct vkattn_tensor_t* vkattn_tensor;
typedef struct vkattn_recorder_t* vkattn_recorder;
typedef struct vkattn_page_allocator_t* vkattn_page_allocator;

/* The library's version, "MAJOR.MINOR.PATCH". */
VKATTN_API const char* vkattn_version(void);
/* The message of the calling thread's last failing call ("" if none). */
VKATTN_API const char* vkattn_last_error(void);

/* ---- Devices -------------------------------------------------------------- */

typedef struct vkattn_device_info {
  uint32_t index;
  char name[256];
  char type[16]; /* discrete | integrated | virtual | cpu | other */
  uint32_t vendor_id, device_id, api_version;
  uint32_t subgroup_size;
  uint64_t device_local_bytes;
} vkattn_device_info;

/* Writes up to `capacity` devices and sets *count to how many there are. */
VKATTN_API vkattn_status vkattn_list_devices(vkattn_device_info* devices, uint32_t capacity, uint32_t* count);

/* ---- Contexts ------------------------------------------------------------- */

typedef struct vkattn_context_options {
  const char* device; /* auto | cpu | gpu | <index> | <name substring>; NULL: $VKATTN_DEVICE, else auto */
  int validation;     /* -1: $VKATTN_VALIDATION; 0 off; 1 on */
} vkattn_context_options;

/* A device created by the caller (see vkattn::ExternalDevice). */
typedef struct vkattn_external_device {
  VkInstance instance;
  VkPhysicalDevice physical_device;
  VkDevice device;
  VkQueue queue;
  uint32_t queue_family;
  int shader_float16_enabled, storage_16bit_enabled, storage_8bit_enabled, shader_int8_enabled;
  int subgroup_size_control_enabled, cooperative_matrix_nv_enabled;
  /* Optional: the host's loader, through which vkattn resolves every entry point
   * (one loader per process); NULL: libvulkan.so.1. */
  PFN_vkGetInstanceProcAddr get_instance_proc_addr;
  /* Optional, both or neither: called around each vkQueueSubmit on `queue`. */
  void (*lock_queue)(void* user);
  void (*unlock_queue)(void* user);
  void* queue_lock_user;
} vkattn_external_device;

/* options may be NULL (the defaults). */
VKATTN_API vkattn_status vkattn_context_create(const vkattn_context_options* options, vkattn_context* out);
VKATTN_API vkattn_status vkattn_context_create_external(const vkattn_external_device* device, vkattn_context* out);
VKATTN_API void vkattn_context_destroy(vkattn_context ctx);
/* The chosen device; valid while the context lives. */
VKATTN_API vkattn_status vkattn_context_device(vkattn_context ctx, vkattn_device_info* info);

/* ---- Tensors -------------------------------------------------------------- */

VKATTN_API vkattn_status vkattn_tensor_create(vkattn_context ctx, vkattn_dtype dtype, const uint64_t* shape,
                                              uint32_t rank, vkattn_tensor* out);
/* The caller's buffer range; vkattn never frees it. */
VKATTN_API vkattn_status vkattn_tensor_wrap(vkattn_context ctx, VkBuffer buffer, VkDeviceSize offset,
                                            VkDeviceSize bytes, vkattn_dtype dtype, const uint64_t* shape,
                                            uint32_t rank, vkattn_tensor* out);
/* A tensor's memory stays alive while a recorder that recorded it holds it. */
VKATTN_API void vkattn_tensor_destroy(vkattn_tensor tensor);
VKATTN_API size_t vkattn_tensor_bytes(vkattn_tensor tensor);
/* Blocking copies of exactly vkattn_tensor_bytes() bytes. */
VKATTN_API vkattn_status vkattn_upload(vkattn_context ctx, vkattn_tensor dst, const void* data, size_t bytes);
VKATTN_API vkattn_status vkattn_download(vkattn_context ctx, vkattn_tensor src, void* data, size_t bytes);

/* ---- Recorders ------------------------------------------------------------ */

VKATTN_API vkattn_status vkattn_recorder_create(vkattn_context ctx, vkattn_recorder* out);
/* Records into the caller's command buffer (in the recording state); the caller submits it. */
VKATTN_API vkattn_status vkattn_recorder_create_external(vkattn_context ctx, VkCommandBuffer command_buffer,
                                                         vkattn_recorder* out);
VKATTN_API void vkattn_recorder_destroy(vkattn_recorder rec);
VKATTN_API vkattn_status vkattn_recorder_submit(vkattn_recorder rec);
VKATTN_API vkattn_status vkattn_recorder_wait(vkattn_recorder rec);
VKATTN_API vkattn_status vkattn_recorder_run(vkattn_recorder rec);
VKATTN_API vkattn_status vkattn_recorder_reset(vkattn_recorder rec);

/* ---- Ops ------------------------------------------------------------------ */

/* Kernel selection overrides (see vkattn::PlanOptions); NULL: the planner's choice. */
typedef struct vkattn_plan_options {
  const char* variant; /* NULL or "": none */
  int strict;
  uint32_t splits, tile_keys;
  int allow_reduced_precision;
  uint32_t rows; /* query rows per workgroup, at most (a power of two; 0: the planner's) */
} vkattn_plan_options;

/* What a recorded call chose; optional output of every op. */
typedef struct vkattn_call_info {
  char variant[64];
  char reason[256];
  uint32_t workgroups[3]; /* text: of the attention dispatch */
  uint32_t splits;        /* text */
} vkattn_call_info;

/* See vkattn::TextAttentionParams. Per-sequence values: `count` 0 (the
 * default, 0), 1 (every sequence) or batch. scale 0: 1/sqrt(head_dim). */
typedef struct vkattn_text_params {
  uint32_t batch, seq_len, num_heads, num_kv_heads, head_dim;
  int causal;
  uint32_t window;
  float softcap, scale;
  vkattn_kv_layout layout;
  uint32_t kv_capacity, num_pages, max_pages;
  const uint32_t* kv_len;
  uint32_t kv_len_count;
  const uint32_t* start_pos;
  uint32_t start_pos_count;
  const uint32_t* kv_start;
  uint32_t kv_start_count;
  uint32_t kv_quant_group; /* i8/i4 K/V: 0 one scale per (token, KV head), 32 one per 32 elements */
  /* VKATTN_KV_TIERED: of kv_len keys the last min(kv_len, hot_window) are read
   * from the hot ring (slot position % hot_window), the others from the cold
   * tier k/v, laid out as cold_layout (contiguous or paged; kv_capacity,
   * num_pages and max_pages are the cold tier's). */
  uint32_t hot_window;
  vkattn_kv_layout cold_layout;
} vkattn_text_params;

/* NULL for the optional ones (page_table, kv_len, start_pos, kv_start, indirect;
 * k_scale and v_scale unless K/V are i8/i4, see vkattn/kvcache.hpp; hot_k and
 * hot_v, f16 [B, hot_window, Hkv, D], unless the layout is tiered). */
typedef struct vkattn_text_tensors {
  vkattn_tensor q, k, v, out, page_table, kv_len, start_pos, kv_start, indirect, k_scale, v_scale;
  vkattn_tensor hot_k, hot_v;
} vkattn_text_tensors;

/* See vkattn::KvAppendParams: T new tokens for each of B sequences, token t of
 * sequence b at positions[b] + t (positions_count 1 or batch). layout:
 * contiguous, ring, paged or tiered; a tiered write is one call that stores
 * each token in its cold slot (cold_layout, the cache's dtype) and in hot slot
 * position % hot_window of the f16 ring hot_k/hot_v. */
typedef struct vkattn_kv_append_params {
  uint32_t batch, tokens, num_kv_heads, head_dim;
  vkattn_kv_layout layout;
  uint32_t kv_capacity, num_pages, max_pages, quant_group;
  const uint32_t* positions;
  uint32_t positions_count;
  /* Paged with host positions, optional: every page written must be allocated
   * to its sequence here (a freed page is an error). */
  vkattn_page_allocator pages;
  /* VKATTN_KV_TIERED: the hot ring's slots and the cold tier's layout
   * (contiguous or paged; kv_capacity, num_pages and max_pages describe it). */
  uint32_t hot_window;
  vkattn_kv_layout cold_layout;
} vkattn_kv_append_params;
/* Every field at vkattn::KvAppendParams's default. Start from it: fields added
 * later (the struct grows at its end) then keep their defaults. */
VKATTN_API vkattn_kv_append_params vkattn_kv_append_params_default(void);
/* k, v [B, T, Hkv, D]; cache_k/cache_v f32|f16|bf16|i8|i4; k_scale/v_scale for
 * i8/i4 caches; page_table for paged ones (or a paged cold tier); positions
 * (u32 [B]) optional; hot_k/hot_v f16 [B, hot_window, Hkv, D] for tiered. */
typedef struct vkattn_kv_append_tensors {
  vkattn_tensor k, v, cache_k, cache_v, k_scale, v_scale, page_table, positions;
  vkattn_tensor hot_k, hot_v;
} vkattn_kv_append_tensors;

typedef struct vkattn_vision_params {
  uint32_t patches, num_heads, head_dim;
  float scale; /* 0: 1/sqrt(head_dim) */
  vkattn_vision_layout layout;
} vkattn_vision_params;
typedef struct vkattn_vision_tensors {
  vkattn_tensor q, k, v, out;
} vkattn_vision_tensors;

typedef struct vkattn_pos_embed_params {
  uint32_t patches, hidden_size, pos_size, patches_x;
} vkattn_pos_embed_params;
typedef struct vkattn_pos_embed_tensors {
  vkattn_tensor hidden, table;
} vkattn_pos_embed_tensors;

/* See vkattn::AudioAttentionParams for the semantics. */
typedef struct vkattn_audio_params {
  uint32_t frames, num_heads, head_dim, chunk, max_past, max_future;
  float logit_cap;
  int scale_keys, include_past_edge;
} vkattn_audio_params;
/* Gemma 4's defaults: chunk 12, max_past 12, max_future 0, logit_cap 50, keys scaled. */
VKATTN_API vkattn_audio_params vkattn_audio_params_default(void);
typedef struct vkattn_audio_tensors {
  vkattn_tensor q, k, v, per_dim_scale, rel_pos, out;
} vkattn_audio_tensors;

/* Each validates and records one call (no submit). options and info may be NULL. */
VKATTN_API vkattn_status vkattn_text_attention(vkattn_recorder rec, const vkattn_text_params* params,
                                               const vkattn_text_tensors* tensors, const vkattn_plan_options* options,
                                               vkattn_call_info* info);
/* Writes new K/V rows into a cache (see vkattn::kv_append). */
VKATTN_API vkattn_status vkattn_kv_append(vkattn_recorder rec, const vkattn_kv_append_params* params,
                                          const vkattn_kv_append_tensors* tensors);
VKATTN_API vkattn_status vkattn_vision_attention(vkattn_recorder rec, const vkattn_vision_params* params,
                                                 const vkattn_vision_tensors* tensors,
                                                 const vkattn_plan_options* options, vkattn_call_info* info);
VKATTN_API vkattn_status vkattn_pos_embed_add(vkattn_recorder rec, const vkattn_pos_embed_params* params,
                                              const vkattn_pos_embed_tensors* tensors);
VKATTN_API vkattn_status vkattn_audio_attention(vkattn_recorder rec, const vkattn_audio_params* params,
                                                const vkattn_audio_tensors* tensors,
                                                const vkattn_plan_options* options, vkattn_call_info* info);

/* ---- BDPA: basis-decomposed paged attention ------------------------------ */

/* See vkattn/bdpa.hpp for the cache (basis rows, int8 residuals with one f32
 * scale per (row, KV head), an index of (basis row, residual row, position))
 * and the semantics; the same order as vkattn::RopePairing. */
typedef enum vkattn_rope_pairing {
  VKATTN_ROPE_ROTATE_HALF = 0,
  VKATTN_ROPE_INTERLEAVED = 1,
  VKATTN_ROPE_PAIRING_MAX_ENUM = 0x7fffffff
} vkattn_rope_pairing;

/* See vkattn::BdpaParams. Per-sequence values as in vkattn_text_params. scale 0: 1/sqrt(head_dim). */
typedef struct vkattn_bdpa_params {
  uint32_t batch, seq_len, num_heads, num_kv_heads, head_dim;
  int causal;
  uint32_t window;
  float softcap, scale;
  uint32_t kv_capacity, num_basis, num_residual;
  uint32_t rotary_dim; /* 0: no RoPE */
  vkattn_rope_pairing pairing;
  uint32_t rope_positions;
  const uint32_t* kv_len;
  uint32_t kv_len_count;
  const uint32_t* start_pos;
  uint32_t start_pos_count;
} vkattn_bdpa_params;
/* q, out [B, S, H, D]; basis_k/v [num_basis, Hkv, D] f32|f16|bf16; residual_k/v
 * i8 [num_residual, Hkv, D]; residual_k/v_scale f32 [num_residual, Hkv]; index
 * u32 [B, kv_capacity, 3]; rope_cos/sin f32 [rope_positions, rotary_dim / 2]
 * (NULL without RoPE); kv_len, start_pos u32 [B] optional. */
typedef struct vkattn_bdpa_tensors {
  vkattn_tensor q, basis_k, basis_v, residual_k, residual_v, residual_k_scale, residual_v_scale, index;
  vkattn_tensor rope_cos, rope_sin, out, kv_len, start_pos;
} vkattn_bdpa_tensors;

/* See vkattn::BdpaBuildParams: from a contiguous pre-RoPE cache and its token ids. */
typedef struct vkattn_bdpa_build_params {
  uint32_t batch, kv_capacity, num_kv_heads, head_dim, vocab_size;
  const uint32_t* kv_len;
  uint32_t kv_len_count;
} vkattn_bdpa_build_params;
/* Inputs k, v [B, C, Hkv, D], token_ids u32 [B, C], kv_len optional; outputs of
 * B * C rows each (basis_k/v f32|f16|bf16, residual_k/v i8, residual_k/v_scale
 * f32, index u32 [B, C, 3]) and num_basis u32 [1], the basis rows used. */
typedef struct vkattn_bdpa_build_tensors {
  vkattn_tensor k, v, token_ids, kv_len;
  vkattn_tensor basis_k, basis_v, residual_k, residual_v, residual_k_scale, residual_v_scale, index, num_basis;
} vkattn_bdpa_build_tensors;

/* Validates, plans ("bdpa_*" variants) and records one call (no submit). options and info may be NULL. */
VKATTN_API vkattn_status vkattn_bdpa_attention(vkattn_recorder rec, const vkattn_bdpa_params* params,
                                               const vkattn_bdpa_tensors* tensors, const vkattn_plan_options* options,
                                               vkattn_call_info* info);
/* Records the build on the GPU (no submit, no read-back). */
VKATTN_API vkattn_status vkattn_bdpa_build(vkattn_recorder rec, const vkattn_bdpa_build_params* params,
                                           const vkattn_bdpa_build_tensors* tensors);
/* Host check of an index of `count` (= batch x kv_capacity x 3) values: the
 * entries each sequence reads name rows inside the basis, the residual pool
 * and (with RoPE) the tables; the first one that does not is the message. */
VKATTN_API vkattn_status vkattn_check_bdpa_index(const vkattn_bdpa_params* params, const uint32_t* index,
                                                 size_t count);

/* ---- Page allocator ------------------------------------------------------- */

/* See vkattn::PageAllocator: the host side of a paged pool of num_pages pages
 * of page_size positions, handing pages to `batch` sequences in order of
 * position; its page table (u32 [batch, max_pages], 0xffffffff without a page)
 * lives on the GPU. The context must outlive it. */
VKATTN_API vkattn_status vkattn_page_allocator_create(vkattn_context ctx, uint32_t num_pages, uint32_t page_size,
                                                      uint32_t batch, uint32_t max_pages,
                                                      vkattn_page_allocator* out);
VKATTN_API void vkattn_page_allocator_destroy(vkattn_page_allocator pages);
/* Sequence `seq` holds positions [0, length) afterwards. */
VKATTN_API vkattn_status vkattn_page_allocator_reserve(vkattn_page_allocator pages, uint32_t seq, uint64_t length);
/* Returns every page of sequence `seq` to the pool. */
VKATTN_API vkattn_status vkattn_page_allocator_release(vkattn_page_allocator pages, uint32_t seq);
VKATTN_API uint32_t vkattn_page_allocator_free_pages(vkattn_page_allocator pages);
/* The GPU page table, uploaded if it changed: a new handle to it (destroy it
 * with vkattn_tensor_destroy; it shows later changes after another call here). */
VKATTN_API vkattn_status vkattn_page_allocator_table(vkattn_page_allocator pages, vkattn_tensor* out);
/* Copies the host table (batch x max_pages values; `count` must be that). */
VKATTN_API vkattn_status vkattn_page_allocator_host_table(vkattn_page_allocator pages, uint32_t* table, size_t count);
/* An error naming the entry if a position of [first, first + count) of
 * sequence `seq` is on a page it does not hold (freed or never given). */
VKATTN_API vkattn_status vkattn_page_allocator_check(vkattn_page_allocator pages, uint32_t seq, uint64_t first,
                                                     uint64_t count);
/* An error naming the entry if `table` (batch x max_pages values) holds a page
 * where the allocator holds another or none (a freed page still in a table). */
VKATTN_API vkattn_status vkattn_page_allocator_check_table(vkattn_page_allocator pages, const uint32_t* table,
                                                           size_t count);

/* ---- Can this device run this call? --------------------------------------- */

/* The plan of a call on the context's device, as JSON (variant, reason,
 * geometry, every candidate and why), without recording anything: OK when
 * some variant runs it, VKATTN_UNSUPPORTED (with the reason) when none does.
 * Writes at most `capacity` bytes (NUL-terminated) and sets *length to the
 * full length, so a call with capacity 0 asks for the size. */
VKATTN_API vkattn_status vkattn_plan_text(vkattn_context ctx, const vkattn_text_params* params, vkattn_dtype q,
                                          vkattn_dtype kv, const vkattn_plan_options* options, char* json,
                                          size_t capacity, size_t* length);
VKATTN_API vkattn_status vkattn_plan_vision(vkattn_context ctx, const vkattn_vision_params* params, vkattn_dtype dtype,
                                            const vkattn_plan_options* options, char* json, size_t capacity,
                                            size_t* length);
/* q: Q's dtype, basis: the basis tensors'. */
VKATTN_API vkattn_status vkattn_plan_bdpa(vkattn_context ctx, const vkattn_bdpa_params* params, vkattn_dtype q,
                                          vkattn_dtype basis, const vkattn_plan_options* options, char* json,
                                          size_t capacity, size_t* length);

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_H */

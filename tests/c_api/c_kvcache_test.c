/* The C API's KV-cache calls driven from C, end to end: a tiered (hot/cold)
 * cache written with kv_append and read by text attention, a BDPA cache built
 * on the GPU and read by BDPA attention (both judged by the float64 oracle),
 * the page allocator handing pages to kv_append, the plan queries, and bad
 * input reported by status and message. Exit status 0 when every check passes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "c_check.h"
#include "c_oracle.h"
#include "vkattn/vkattn.h"

/* Writes `rows` (f32 [1, tokens, Hkv, D], already f16-exact) into an f16 cache
 * at `position` through a staging tensor, as a runtime appends new tokens. */
static void append_rows(vkattn_context ctx, vkattn_recorder rec, vkattn_kv_append_params p, vkattn_tensor cache_k,
                        vkattn_tensor cache_v, const float* k_rows, const float* v_rows, uint32_t position) {
  const uint64_t shape[4] = {1, p.tokens, p.num_kv_heads, p.head_dim};
  const size_t n = (size_t)p.tokens * p.num_kv_heads * p.head_dim;
  vkattn_tensor k = tensor_with(ctx, shape, 4, k_rows, n), v = tensor_with(ctx, shape, 4, v_rows, n);
  p.positions = &position;
  p.positions_count = 1;
  vkattn_kv_append_tensors t = {.k = k, .v = v, .cache_k = cache_k, .cache_v = cache_v};
  CHECK_OK(vkattn_kv_append(rec, &p, &t));
  CHECK_OK(vkattn_recorder_run(rec));
  CHECK_OK(vkattn_recorder_reset(rec));
  vkattn_tensor_destroy(k);
  vkattn_tensor_destroy(v);
}

/* 30 keys of one sequence: the first 22 from an f16 cold tier of 40 slots,
 * the last 8 from an f16 hot ring of 8 (position p in slot p % 8). The cold
 * tier holds other values at the hot positions than the ring does, so a
 * kernel that read the wrong tier would miss the oracle. A decode query at
 * position 29, then a causal prefill chunk at 26..29. */
static void tiered(vkattn_context ctx, vkattn_recorder rec) {
  enum { HKV = 2, D = 32, C = 40, W = 8, LEN = 30, HOT_FROM = LEN - W };
  const size_t row = HKV * D, ncold = C * row, nhot = W * row;
  float *cold_k = random_floats(ncold, 2.0f), *cold_v = random_floats(ncold, 1.0f);
  float *hot_k = random_floats(nhot, 2.0f), *hot_v = random_floats(nhot, 1.0f); /* in slot order */
  c_oracle_round_f16(cold_k, ncold), c_oracle_round_f16(cold_v, ncold);
  c_oracle_round_f16(hot_k, nhot), c_oracle_round_f16(hot_v, nhot);
  /* The ring's rows in position order (HOT_FROM + t in slot (HOT_FROM + t) % W), as kv_append takes them. */
  float *hot_k_rows = malloc(nhot * sizeof(float)), *hot_v_rows = malloc(nhot * sizeof(float));
  for (int t = 0; t < W; ++t) {
    memcpy(hot_k_rows + t * row, hot_k + ((HOT_FROM + t) % W) * row, row * sizeof(float));
    memcpy(hot_v_rows + t * row, hot_v + ((HOT_FROM + t) % W) * row, row * sizeof(float));
  }
  const uint64_t cold_shape[4] = {1, C, HKV, D}, hot_shape[4] = {1, W, HKV, D};
  vkattn_text_tensors t = {0};
  t.k = tensor_from(ctx, VKATTN_F16, cold_shape, 4, NULL, 0);
  t.v = tensor_from(ctx, VKATTN_F16, cold_shape, 4, NULL, 0);
  t.hot_k = tensor_from(ctx, VKATTN_F16, hot_shape, 4, NULL, 0);
  t.hot_v = tensor_from(ctx, VKATTN_F16, hot_shape, 4, NULL, 0);
  vkattn_kv_append_params ap = vkattn_kv_append_params_default();
  ap.num_kv_heads = HKV;
  ap.head_dim = D;
  ap.tokens = C;
  ap.kv_capacity = C;
  append_rows(ctx, rec, ap, t.k, t.v, cold_k, cold_v, 0);
  ap.layout = VKATTN_KV_RING;
  ap.tokens = W;
  ap.kv_capacity = W;
  append_rows(ctx, rec, ap, t.hot_k, t.hot_v, hot_k_rows, hot_v_rows, HOT_FROM);
  ap.layout = VKATTN_KV_TIERED; /* one call per tier */
  vkattn_kv_append_tensors whole = {.k = t.k, .v = t.v, .cache_k = t.k, .cache_v = t.v};
  CHECK_FAILS(vkattn_kv_append(rec, &ap, &whole), VKATTN_INVALID_ARGUMENT, "for kv_append (one call per tier");

  const uint32_t kv_len = LEN;
  vkattn_text_params p = {.batch = 1, .num_heads = 4, .num_kv_heads = HKV, .head_dim = D, .causal = 1,
                          .layout = VKATTN_KV_TIERED, .kv_capacity = C, .kv_len = &kv_len, .kv_len_count = 1,
                          .start_pos_count = 1, .hot_window = W, .cold_layout = VKATTN_KV_CONTIGUOUS};
  const double tol = c_oracle_tolerance(VKATTN_F32, VKATTN_F16, VKATTN_F32);
  uint32_t start_pos = 0;
  p.start_pos = &start_pos;
  for (uint32_t s = 1; s <= 4; s += 3) {
    start_pos = LEN - s;
    p.seq_len = s;
    const uint64_t q_shape[4] = {1, s, 4, D};
    float* q = random_floats((size_t)s * 4 * D, 2.0f);
    t.q = tensor_with(ctx, q_shape, 4, q, (size_t)s * 4 * D);
    t.out = tensor_with(ctx, q_shape, 4, NULL, 0);
    vkattn_call_info info;
    CHECK_OK(vkattn_text_attention(rec, &p, &t, NULL, &info));
    CHECK_OK(vkattn_recorder_run(rec));
    CHECK_OK(vkattn_recorder_reset(rec));
    float* got = download(ctx, t.out);
    char what[32];
    snprintf(what, sizeof what, "tiered S=%u", s);
    check_error_within(what, c_oracle_text_error(&p, q, cold_k, cold_v, hot_k, hot_v, got), tol);
    printf("%-12s variant %s\n", "", info.variant);
    size_t length = 0;
    CHECK_OK(vkattn_plan_text(ctx, &p, VKATTN_F32, VKATTN_F16, NULL, NULL, 0, &length));
    CHECK(length > 0, "tiered plan JSON length");
    release((void*[]){q, got, NULL}, (vkattn_tensor[]){t.q, t.out, NULL});
  }

  /* Bad input: no hot ring slots; a layout past the enum; no hot ring tensors. */
  p.hot_window = 0;
  CHECK_FAILS(vkattn_plan_text(ctx, &p, VKATTN_F32, VKATTN_F16, NULL, NULL, 0, &(size_t){0}),
              VKATTN_INVALID_ARGUMENT, "hot_window: expected >= 1");
  p.hot_window = W;
  p.cold_layout = (vkattn_kv_layout)7;
  CHECK_FAILS(vkattn_plan_text(ctx, &p, VKATTN_F32, VKATTN_F16, NULL, NULL, 0, &(size_t){0}),
              VKATTN_INVALID_ARGUMENT, "cold_layout: expected 0 (contiguous), 1 (ring), 2 (paged) or 3 (tiered), got 7");
  p.cold_layout = VKATTN_KV_CONTIGUOUS;
  start_pos = LEN - 1;
  p.seq_len = 1;
  const uint64_t q_shape[4] = {1, 1, 4, D};
  t.q = tensor_with(ctx, q_shape, 4, NULL, 0);
  t.out = tensor_with(ctx, q_shape, 4, NULL, 0);
  vkattn_tensor hot = t.hot_k;
  t.hot_k = NULL;
  CHECK_FAILS(vkattn_text_attention(rec, &p, &t, NULL, NULL), VKATTN_INVALID_ARGUMENT, "hot_k");
  t.hot_k = hot;
  release((void*[]){cold_k, cold_v, hot_k, hot_v, hot_k_rows, hot_v_rows, NULL},
          (vkattn_tensor[]){t.k, t.v, t.hot_k, t.hot_v, t.q, t.out, NULL});
}

/* RoPE tables [positions, rotary_dim / 2] with theta 10000. */
static void rope_tables(uint32_t positions, uint32_t rotary_dim, float* cos_out, float* sin_out) {
  const uint32_t half = rotary_dim / 2;
  for (uint32_t p = 0; p < positions; ++p)
    for (uint32_t i = 0; i < half; ++i) {
      const double angle = p * pow(10000.0, -2.0 * i / rotary_dim);
      cos_out[p * half + i] = (float)cos(angle);
      sin_out[p * half + i] = (float)sin(angle);
    }
}

/* Two sequences of 24 slots (20 and 13 keys) whose rows are a token's
 * embedding plus a smaller part of their own, 6 token ids: built into a BDPA
 * cache on the GPU, then a causal chunk of 2 queries per sequence with RoPE
 * over the first 24 of 32 dimensions, in one recording; judged on the cache
 * the kernel read and end to end on the cache it was built from. */
static void bdpa(vkattn_context ctx, vkattn_recorder rec) {
  enum { B = 2, C = 24, HKV = 2, H = 4, D = 32, S = 2, VOCAB = 6, ROT = 24, ROWS = B * C };
  const size_t row = HKV * D, nkv = ROWS * row, nq = B * S * H * D;
  const uint32_t kv_len[B] = {20, 13}, start_pos[B] = {18, 11};
  uint32_t tokens[B * C];
  float* spread = random_floats(2 * nkv, 0.3f);
  float* emb = random_floats(2 * VOCAB * row, 1.0f); /* K's embeddings, then V's */
  float *k = malloc(nkv * sizeof(float)), *v = malloc(nkv * sizeof(float));
  for (int f = 0; f < B * C; ++f) tokens[f] = (uint32_t)(f * 7 + f / 5) % VOCAB;
  for (size_t f = 0; f < ROWS; ++f)
    for (size_t e = 0; e < row; ++e) {
      k[f * row + e] = emb[tokens[f] * row + e] + spread[f * row + e];
      v[f * row + e] = emb[(VOCAB + tokens[f]) * row + e] + spread[nkv + f * row + e];
    }
  int seen[VOCAB] = {0}, distinct = 0;
  for (int b = 0; b < B; ++b)
    for (uint32_t j = 0; j < kv_len[b]; ++j) distinct += !seen[tokens[b * C + j]]++;

  const uint64_t kv_shape[4] = {B, C, HKV, D}, rows_shape[3] = {ROWS, HKV, D}, scale_shape[2] = {ROWS, HKV};
  const uint64_t token_shape[2] = {B, C}, index_shape[3] = {B, C, 3}, one[1] = {1};
  const uint64_t q_shape[4] = {B, S, H, D}, rope_shape[2] = {C, ROT / 2};
  vkattn_bdpa_build_tensors bt = {0};
  bt.k = tensor_with(ctx, kv_shape, 4, k, nkv);
  bt.v = tensor_with(ctx, kv_shape, 4, v, nkv);
  bt.token_ids = tensor_from(ctx, VKATTN_U32, token_shape, 2, tokens, sizeof tokens);
  bt.basis_k = tensor_with(ctx, rows_shape, 3, NULL, 0);
  bt.basis_v = tensor_with(ctx, rows_shape, 3, NULL, 0);
  bt.residual_k = tensor_from(ctx, VKATTN_I8, rows_shape, 3, NULL, 0);
  bt.residual_v = tensor_from(ctx, VKATTN_I8, rows_shape, 3, NULL, 0);
  bt.residual_k_scale = tensor_with(ctx, scale_shape, 2, NULL, 0);
  bt.residual_v_scale = tensor_with(ctx, scale_shape, 2, NULL, 0);
  bt.index = tensor_from(ctx, VKATTN_U32, index_shape, 3, NULL, 0);
  bt.num_basis = tensor_from(ctx, VKATTN_U32, one, 1, NULL, 0);
  const vkattn_bdpa_build_params bp = {B, C, HKV, D, VOCAB, kv_len, B};

  float *q = random_floats(nq, 2.0f), *rope_cos = malloc(C * ROT / 2 * sizeof(float));
  float* rope_sin = malloc(C * ROT / 2 * sizeof(float));
  rope_tables(C, ROT, rope_cos, rope_sin);
  vkattn_bdpa_params p = {.batch = B, .seq_len = S, .num_heads = H, .num_kv_heads = HKV, .head_dim = D,
                          .causal = 1, .kv_capacity = C, .num_basis = ROWS, .num_residual = ROWS,
                          .rotary_dim = ROT, .pairing = VKATTN_ROPE_ROTATE_HALF, .rope_positions = C,
                          .kv_len = kv_len, .kv_len_count = B, .start_pos = start_pos, .start_pos_count = B};
  vkattn_bdpa_tensors t = {.q = tensor_with(ctx, q_shape, 4, q, nq), .basis_k = bt.basis_k, .basis_v = bt.basis_v,
                           .residual_k = bt.residual_k, .residual_v = bt.residual_v,
                           .residual_k_scale = bt.residual_k_scale, .residual_v_scale = bt.residual_v_scale,
                           .index = bt.index, .rope_cos = tensor_with(ctx, rope_shape, 2, rope_cos, C * ROT / 2),
                           .rope_sin = tensor_with(ctx, rope_shape, 2, rope_sin, C * ROT / 2),
                           .out = tensor_with(ctx, q_shape, 4, NULL, 0)};
  CHECK_OK(vkattn_bdpa_build(rec, &bp, &bt));
  vkattn_call_info info;
  CHECK_OK(vkattn_bdpa_attention(rec, &p, &t, NULL, &info));
  CHECK_OK(vkattn_recorder_run(rec));
  CHECK_OK(vkattn_recorder_reset(rec));

  uint32_t* num_basis = download(ctx, bt.num_basis);
  CHECK(*num_basis == (uint32_t)distinct, "num_basis: expected %d distinct token ids, got %u", distinct, *num_basis);
  float* got = download(ctx, t.out);
  const c_bdpa_cache cache = {download(ctx, bt.basis_k),          download(ctx, bt.basis_v),
                              download(ctx, bt.residual_k),       download(ctx, bt.residual_v),
                              download(ctx, bt.residual_k_scale), download(ctx, bt.residual_v_scale),
                              download(ctx, bt.index)};
  check_error("bdpa", c_oracle_bdpa_error(&p, q, &cache, rope_cos, rope_sin, got));
  check_error_within("bdpa e2e", c_oracle_bdpa_unquantized_error(&p, q, k, v, rope_cos, rope_sin, got),
                     c_oracle_tolerance(VKATTN_F32, VKATTN_I8, VKATTN_F32));
  printf("%-12s variant %s, %u basis rows\n", "", info.variant, *num_basis);

  size_t length = 0;
  CHECK_OK(vkattn_plan_bdpa(ctx, &p, VKATTN_F32, VKATTN_F32, NULL, NULL, 0, &length));
  char* json = malloc(length + 1);
  CHECK_OK(vkattn_plan_bdpa(ctx, &p, VKATTN_F32, VKATTN_F32, NULL, json, length + 1, &length));
  CHECK(strstr(json, "\"variant\": \"bdpa_") && strstr(json, "\"candidates\""), "bdpa plan JSON: %s", json);
  const vkattn_plan_options strict = {"no_such_variant", 1, 0, 0, 0};
  CHECK_FAILS(vkattn_plan_bdpa(ctx, &p, VKATTN_F32, VKATTN_F32, &strict, NULL, 0, &length), VKATTN_INVALID_ARGUMENT,
              "variant: expected a bdpa variant name");

  /* The host index check: the built index passes; an entry past the basis is named. */
  uint32_t* index = (uint32_t*)cache.index;
  CHECK_OK(vkattn_check_bdpa_index(&p, index, B * C * 3));
  index[(1 * C + 2) * 3] = ROWS;
  CHECK_FAILS(vkattn_check_bdpa_index(&p, index, B * C * 3), VKATTN_INVALID_ARGUMENT,
              "index[1][2]: expected a basis row below num_basis (48), got 48");
  CHECK_FAILS(vkattn_check_bdpa_index(&p, index, 5), VKATTN_INVALID_ARGUMENT, "index: expected batch x kv_capacity");
  p.pairing = (vkattn_rope_pairing)2;
  CHECK_FAILS(vkattn_bdpa_attention(rec, &p, &t, NULL, NULL), VKATTN_INVALID_ARGUMENT,
              "pairing: expected 0 (rotate_half) or 1 (interleaved), got 2");

  release((void*[]){spread, emb, k, v, q, rope_cos, rope_sin, num_basis, got, json, (void*)cache.basis_k,
                    (void*)cache.basis_v, (void*)cache.residual_k, (void*)cache.residual_v, (void*)cache.scale_k,
                    (void*)cache.scale_v, index, NULL},
          (vkattn_tensor[]){bt.k, bt.v, bt.token_ids, bt.basis_k, bt.basis_v, bt.residual_k, bt.residual_v,
                            bt.residual_k_scale, bt.residual_v_scale, bt.index, bt.num_basis, t.q, t.rope_cos,
                            t.rope_sin, t.out, NULL});
}

/* A paged pool of 6 pages of 4 positions for 2 sequences: pages handed out
 * in order, the GPU table read by kv_append (positions 2..5 of sequence 0 on
 * pages 0 and 1, 0..3 of sequence 1 on page 2), a freed page refused. */
static void page_allocator(vkattn_context ctx, vkattn_recorder rec) {
  enum { PAGES = 6, PAGE = 4, B = 2, MAX = 3, HKV = 1, D = 8 };
  vkattn_page_allocator pages = NULL;
  CHECK_OK(vkattn_page_allocator_create(ctx, PAGES, PAGE, B, MAX, &pages));
  if (!pages) return;
  CHECK_OK(vkattn_page_allocator_reserve(pages, 0, 6)); /* pages 0, 1 */
  CHECK_OK(vkattn_page_allocator_reserve(pages, 1, 3)); /* page 2 */
  CHECK(vkattn_page_allocator_free_pages(pages) == 3, "free pages: expected 3, got %u",
        vkattn_page_allocator_free_pages(pages));
  uint32_t table[B * MAX];
  CHECK_OK(vkattn_page_allocator_host_table(pages, table, B * MAX));
  const uint32_t none = 0xffffffffu, want[B * MAX] = {0, 1, none, 2, none, none};
  CHECK(memcmp(table, want, sizeof want) == 0, "table: expected {0, 1, -, 2, -, -}, got {%u, %u, %u, %u, %u, %u}",
        table[0], table[1], table[2], table[3], table[4], table[5]);
  CHECK_FAILS(vkattn_page_allocator_host_table(pages, table, 4), VKATTN_INVALID_ARGUMENT,
              "count: expected batch x max_pages = 6 values, got 4");

  const uint64_t pool_shape[4] = {PAGES, PAGE, HKV, D}, rows_shape[4] = {B, 4, HKV, D};
  float* zeros = calloc(PAGES * PAGE * D, sizeof(float));
  float* rows = random_floats(B * 4 * D, 1.0f);
  vkattn_kv_append_tensors t = {.k = tensor_with(ctx, rows_shape, 4, rows, B * 4 * D),
                                .cache_k = tensor_with(ctx, pool_shape, 4, zeros, PAGES * PAGE * D),
                                .cache_v = tensor_with(ctx, pool_shape, 4, zeros, PAGES * PAGE * D)};
  t.v = t.k;
  CHECK_OK(vkattn_page_allocator_table(pages, &t.page_table));
  const uint32_t positions[B] = {2, 0};
  vkattn_kv_append_params p = vkattn_kv_append_params_default();
  p.batch = B;
  p.tokens = 4;
  p.num_kv_heads = HKV;
  p.head_dim = D;
  p.layout = VKATTN_KV_PAGED;
  p.kv_capacity = PAGE;
  p.num_pages = PAGES;
  p.max_pages = MAX;
  p.positions = positions;
  p.positions_count = B;
  p.pages = pages;
  CHECK_OK(vkattn_kv_append(rec, &p, &t));
  CHECK_OK(vkattn_recorder_run(rec));
  CHECK_OK(vkattn_recorder_reset(rec));
  float* pool = download(ctx, t.cache_k);
  int mismatches = 0;
  for (int slot = 0; slot < PAGES * PAGE; ++slot) { /* page * PAGE + row */
    const int token = slot >= 2 && slot < 6 ? slot - 2 : slot >= 8 && slot < 12 ? 4 + slot - 8 : -1;
    for (int e = 0; e < D; ++e) mismatches += pool[slot * D + e] != (token >= 0 ? rows[token * D + e] : 0.0f);
  }
  CHECK(mismatches == 0, "paged pool: %d elements differ from the rows written", mismatches);
  printf("%-12s paged write through the allocator's table exact (%d mismatches)\n", "pages", mismatches);

  /* Sequence 0 gives its pages back: writing there, or a table still naming them, is refused. */
  CHECK_OK(vkattn_page_allocator_release(pages, 0));
  CHECK(vkattn_page_allocator_free_pages(pages) == 5, "free pages after release: %u",
        vkattn_page_allocator_free_pages(pages));
  CHECK_FAILS(vkattn_kv_append(rec, &p, &t), VKATTN_INVALID_ARGUMENT, "page_table[0][0]: expected a page allocated");
  CHECK_FAILS(vkattn_page_allocator_check(pages, 0, 0, 1), VKATTN_INVALID_ARGUMENT, "freed or never reserved");
  CHECK_FAILS(vkattn_page_allocator_check_table(pages, table, B * MAX), VKATTN_INVALID_ARGUMENT,
              "page_table[0][0]: expected none (the page the allocator holds there), got 0 (a freed page)");
  CHECK_OK(vkattn_page_allocator_check(pages, 1, 0, 3));
  CHECK_FAILS(vkattn_page_allocator_reserve(pages, 2, 1), VKATTN_INVALID_ARGUMENT, "sequence: expected below batch (2), got 2");
  vkattn_page_allocator other = NULL;
  CHECK_FAILS(vkattn_page_allocator_create(ctx, 0, PAGE, B, MAX, &other), VKATTN_INVALID_ARGUMENT, "num_pages");

  vkattn_page_allocator_destroy(pages);
  release((void*[]){zeros, rows, pool, NULL}, (vkattn_tensor[]){t.k, t.cache_k, t.cache_v, t.page_table, NULL});
}

int main(void) {
  vkattn_context ctx = NULL;
  CHECK_OK(vkattn_context_create(NULL, &ctx)); /* $VKATTN_DEVICE, $VKATTN_VALIDATION */
  if (!ctx) return 1;
  const int status = run_checks(ctx, (const c_check_fn[]){tiered, bdpa, page_allocator, NULL});
  vkattn_context_destroy(ctx);
  return status;
}

/* The C API driven from C, end to end: devices, a context, tensors, a
 * recorder, every op (text, vision, pos-embed, audio) checked against the
 * float64 oracle, the plan query, and bad input reported by status and
 * message. Exit status 0 when every check passes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_check.h"
#include "c_oracle.h"
#include "vkattn/vkattn.h"

static void text(vkattn_context ctx, vkattn_recorder rec) {
  c_text_case c = c_text_case_make();
  vkattn_text_params p = c.params;
  vkattn_text_tensors t = {0};
  t.q = tensor_with(ctx, c.q_shape, 4, c.q, c.nq);
  t.k = tensor_with(ctx, c.kv_shape, 4, c.k, c.nk);
  t.v = tensor_with(ctx, c.kv_shape, 4, c.v, c.nk);
  t.out = tensor_with(ctx, c.q_shape, 4, NULL, 0);
  vkattn_call_info info;
  CHECK_OK(vkattn_text_attention(rec, &p, &t, NULL, &info));
  CHECK_OK(vkattn_recorder_run(rec));
  CHECK(strlen(info.variant) > 0, "expected the chosen variant's name");
  float* got = download(ctx, t.out);
  check_error("text", c_oracle_text_error(&p, c.q, c.k, c.v, NULL, NULL, got));

  /* The plan of the same call, without recording: its size, then the JSON. */
  size_t length = 0;
  CHECK_OK(vkattn_plan_text(ctx, &p, VKATTN_F32, VKATTN_F32, NULL, NULL, 0, &length));
  char* json = malloc(length + 1);
  CHECK_OK(vkattn_plan_text(ctx, &p, VKATTN_F32, VKATTN_F32, NULL, json, length + 1, &length));
  CHECK(strstr(json, "\"variant\"") && strstr(json, "\"candidates\""), "plan JSON: %s", json);
  /* Forcing a variant that cannot run this call, strictly, is refused. */
  vkattn_plan_options strict = {"no_such_variant", 1, 0, 0, 0};
  CHECK(vkattn_plan_text(ctx, &p, VKATTN_F32, VKATTN_F32, &strict, NULL, 0, &length) == VKATTN_INVALID_ARGUMENT,
        "strict unknown variant: %s", vkattn_last_error());
  /* An enum value past the named ones (any int is a value of the C enums) is refused, naming the parameter. */
  vkattn_tensor none = NULL;
  CHECK_FAILS(vkattn_tensor_create(ctx, (vkattn_dtype)9, (const uint64_t[]){4}, 1, &none), VKATTN_INVALID_ARGUMENT,
              "dtype: expected 0 (f32)");
  CHECK_FAILS(vkattn_plan_text(ctx, &p, VKATTN_F32, (vkattn_dtype)6, NULL, NULL, 0, &length), VKATTN_INVALID_ARGUMENT,
              "kv: expected 0 (f32)");
  /* A tuning value reaches the planner: rows per workgroup must be a power of two. */
  const vkattn_plan_options rows = {.rows = 3};
  CHECK(vkattn_plan_text(ctx, &p, VKATTN_F32, VKATTN_F32, &rows, NULL, 0, &length) == VKATTN_INVALID_ARGUMENT &&
            strstr(vkattn_last_error(), "rows: expected a power of two") != NULL,
        "rows 3: %s", vkattn_last_error());

  /* Bad input: a status and a message naming the parameter. */
  p.num_kv_heads = 3;
  CHECK(vkattn_text_attention(rec, &p, &t, NULL, NULL) == VKATTN_INVALID_ARGUMENT, "num_kv_heads 3 of 4 heads");
  CHECK(strstr(vkattn_last_error(), "num_kv_heads") != NULL, "message: %s", vkattn_last_error());
  CHECK(vkattn_text_attention(rec, NULL, &t, NULL, NULL) == VKATTN_INVALID_ARGUMENT, "NULL params");
  CHECK(strstr(vkattn_last_error(), "params: expected non-null") != NULL, "message: %s", vkattn_last_error());

  free(json);
  c_text_case_free(&c);
  release((void*[]){got, NULL}, (vkattn_tensor[]){t.q, t.k, t.v, t.out, NULL});
}

static void vision(vkattn_context ctx, vkattn_recorder rec) {
  vkattn_vision_params p = {64, 2, 16, 0.0f, VKATTN_VISION_PHD};
  const uint64_t shape[3] = {64, 2, 16};
  const size_t n = 64 * 2 * 16;
  float *q = random_floats(n, 2.0f), *k = random_floats(n, 2.0f), *v = random_floats(n, 1.0f);
  vkattn_vision_tensors t = {tensor_with(ctx, shape, 3, q, n), tensor_with(ctx, shape, 3, k, n),
                             tensor_with(ctx, shape, 3, v, n), tensor_with(ctx, shape, 3, NULL, 0)};
  CHECK_OK(vkattn_vision_attention(rec, &p, &t, NULL, NULL));
  CHECK_OK(vkattn_recorder_run(rec));
  float* got = download(ctx, t.out);
  check_error("vision", c_oracle_vision_error(&p, q, k, v, got));
  size_t length = 0;
  CHECK_OK(vkattn_plan_vision(ctx, &p, VKATTN_F32, NULL, NULL, 0, &length));
  CHECK(length > 0, "vision plan JSON length");
  release((void*[]){got, q, k, v, NULL}, (vkattn_tensor[]){t.q, t.k, t.v, t.out, NULL});
}

static void pos_embed(vkattn_context ctx, vkattn_recorder rec) {
  vkattn_pos_embed_params p = {24, 16, 8, 6}; /* 6 x 4 patches */
  const uint64_t hs[2] = {24, 16}, ts[3] = {2, 8, 16};
  float *hidden = random_floats(24 * 16, 1.0f), *table = random_floats(2 * 8 * 16, 1.0f);
  vkattn_pos_embed_tensors t = {tensor_with(ctx, hs, 2, hidden, 24 * 16), tensor_with(ctx, ts, 3, table, 2 * 8 * 16)};
  CHECK_OK(vkattn_pos_embed_add(rec, &p, &t));
  CHECK_OK(vkattn_recorder_run(rec));
  float* got = download(ctx, t.hidden);
  check_error("pos-embed", c_oracle_pos_embed_error(&p, hidden, table, got));
  release((void*[]){got, hidden, table, NULL}, (vkattn_tensor[]){t.hidden, t.table, NULL});
}

static void audio(vkattn_context ctx, vkattn_recorder rec) {
  vkattn_audio_params p = vkattn_audio_params_default();
  p.frames = 30;
  p.num_heads = 2;
  p.head_dim = 32;
  const uint64_t shape[3] = {30, 2, 32}, rs[3] = {p.max_past + p.max_future + 1, 2, 32}, ds[1] = {32};
  const size_t n = 30 * 2 * 32, nr = (p.max_past + p.max_future + 1) * 2 * 32;
  float *q = random_floats(n, 2.0f), *k = random_floats(n, 2.0f), *v = random_floats(n, 1.0f);
  float *scale = random_floats(32, 1.0f), *rel = random_floats(nr, 1.0f);
  vkattn_audio_tensors t = {tensor_with(ctx, shape, 3, q, n),     tensor_with(ctx, shape, 3, k, n),
                            tensor_with(ctx, shape, 3, v, n),     tensor_with(ctx, ds, 1, scale, 32),
                            tensor_with(ctx, rs, 3, rel, nr),     tensor_with(ctx, shape, 3, NULL, 0)};
  CHECK_OK(vkattn_audio_attention(rec, &p, &t, NULL, NULL));
  CHECK_OK(vkattn_recorder_run(rec));
  float* got = download(ctx, t.out);
  check_error("audio", c_oracle_audio_error(&p, q, k, v, scale, rel, got));
  release((void*[]){got, q, k, v, scale, rel, NULL},
          (vkattn_tensor[]){t.q, t.k, t.v, t.per_dim_scale, t.rel_pos, t.out, NULL});
}

/* kv_append through the C API: two decode tokens written into an f32 ring at
 * positions 5 and 13 (slot 5 both times: the second write wins), the rest of
 * the cache untouched; then an int8 cache the attention call reads with its
 * scales; a position past a contiguous cache is an error naming it. */
static void kv_append_c(vkattn_context ctx, vkattn_recorder rec) {
  const uint64_t src_shape[4] = {1, 1, 2, 16}, cache_shape[4] = {1, 8, 2, 16}, scale_shape[3] = {1, 8, 2};
  float* first = random_floats(32, 1.0f);
  float* second = random_floats(32, 1.0f);
  float* zeros = calloc(8 * 2 * 16, sizeof(float));
  vkattn_tensor k1 = tensor_with(ctx, src_shape, 4, first, 32), k2 = tensor_with(ctx, src_shape, 4, second, 32);
  vkattn_tensor ck = tensor_with(ctx, cache_shape, 4, zeros, 256), cv = tensor_with(ctx, cache_shape, 4, zeros, 256);
  const uint32_t pos1 = 5, pos2 = 13;
  vkattn_kv_append_params p = {.batch = 1, .tokens = 1, .num_kv_heads = 2, .head_dim = 16, .layout = VKATTN_KV_RING,
                               .kv_capacity = 8, .positions = &pos1, .positions_count = 1};
  vkattn_kv_append_tensors t = {.k = k1, .v = k1, .cache_k = ck, .cache_v = cv};
  CHECK_OK(vkattn_kv_append(rec, &p, &t));
  p.positions = &pos2;
  t.k = t.v = k2;
  CHECK_OK(vkattn_kv_append(rec, &p, &t));
  CHECK_OK(vkattn_recorder_run(rec));
  float* got = download(ctx, cv);
  int mismatches = 0;
  for (int i = 0; i < 256; ++i) mismatches += got[i] != (i / 32 == 5 ? second[i % 32] : 0.0f);
  CHECK(mismatches == 0, "ring cache: %d elements differ from the second write at slot 5", mismatches);
  printf("%-10s ring write exact (%d mismatches)\n", "kv_append", mismatches);
  CHECK_OK(vkattn_recorder_reset(rec));

  vkattn_tensor qk = NULL, qv = NULL, ks = NULL, vs = NULL;
  CHECK_OK(vkattn_tensor_create(ctx, VKATTN_I8, cache_shape, 4, &qk));
  CHECK_OK(vkattn_tensor_create(ctx, VKATTN_I8, cache_shape, 4, &qv));
  CHECK_OK(vkattn_tensor_create(ctx, VKATTN_F16, scale_shape, 3, &ks));
  CHECK_OK(vkattn_tensor_create(ctx, VKATTN_F16, scale_shape, 3, &vs));
  vkattn_kv_append_tensors qt = {.k = k2, .v = k2, .cache_k = qk, .cache_v = qv, .k_scale = ks, .v_scale = vs};
  p.layout = VKATTN_KV_CONTIGUOUS;
  p.positions = &pos1;
  CHECK_OK(vkattn_kv_append(rec, &p, &qt));
  /* One query at position 5 over the one key at 5: the output is that key's V row, dequantized. */
  const uint64_t q_shape[4] = {1, 1, 2, 16};
  vkattn_tensor q = tensor_with(ctx, q_shape, 4, first, 32), out = tensor_with(ctx, q_shape, 4, NULL, 0);
  const uint32_t len = 1;
  vkattn_text_params tp = {.batch = 1, .seq_len = 1, .num_heads = 2, .num_kv_heads = 2, .head_dim = 16,
                           .kv_capacity = 8, .kv_len = &len, .kv_len_count = 1, .start_pos = &pos1,
                           .start_pos_count = 1, .kv_start = &pos1, .kv_start_count = 1};
  vkattn_text_tensors tt = {.q = q, .k = qk, .v = qv, .out = out, .k_scale = ks, .v_scale = vs};
  CHECK_OK(vkattn_text_attention(rec, &tp, &tt, NULL, NULL));
  CHECK_OK(vkattn_recorder_run(rec));
  float* o = download(ctx, out);
  double worst = 0.0;
  for (int h = 0; h < 2; ++h) {
    double absmax = 0.0;
    for (int i = 0; i < 16; ++i) absmax = fmax(absmax, fabs(second[h * 16 + i]));
    for (int i = 0; i < 16; ++i) worst = fmax(worst, fabs(o[h * 16 + i] - second[h * 16 + i]) / (absmax / 127.0));
  }
  /* Half a quantization step, with room for the f16 rounding of the scale. */
  CHECK(worst <= 0.51, "int8 cache: output off the V row by %.3f scale steps", worst);
  printf("%-10s int8 row within %.3f scale steps\n", "kv_append", worst);

  const uint32_t past = 8;
  p.positions = &past;
  CHECK(vkattn_kv_append(rec, &p, &qt) == VKATTN_INVALID_ARGUMENT, "position 8 of 8 slots");
  CHECK(strstr(vkattn_last_error(), "positions: expected position + tokens <= kv_capacity (8)") != NULL, "message: %s",
        vkattn_last_error());
  void* arrays[] = {first, second, zeros, got, o, NULL};
  vkattn_tensor tensors[] = {k1, k2, ck, cv, qk, qv, ks, vs, q, out, NULL};
  release(arrays, tensors);
}

int main(void) {
  CHECK(strchr(vkattn_version(), '.') != NULL, "version '%s'", vkattn_version());
  vkattn_device_info devices[8];
  uint32_t count = 0;
  CHECK_OK(vkattn_list_devices(devices, 8, &count));
  CHECK(count >= 1, "expected a device, got %u", count);

  vkattn_context ctx = NULL;
  CHECK_OK(vkattn_context_create(NULL, &ctx)); /* $VKATTN_DEVICE, $VKATTN_VALIDATION */
  if (!ctx) return 1;
  vkattn_device_info info;
  CHECK_OK(vkattn_context_device(ctx, &info));
  printf("vkattn %s on %s\n", vkattn_version(), info.name);
  vkattn_context_options bad = {"no-such-device-xyz", -1};
  vkattn_context other = NULL;
  CHECK(vkattn_context_create(&bad, &other) == VKATTN_INVALID_ARGUMENT && other == NULL, "unknown device");
  CHECK(strstr(vkattn_last_error(), "no-such-device-xyz") != NULL, "message: %s", vkattn_last_error());

  const int status = run_checks(ctx, (const c_check_fn[]){text, vision, pos_embed, audio, kv_append_c, NULL});
  vkattn_context_destroy(ctx);
  return status;
}

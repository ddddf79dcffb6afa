/* The C API driven from C, end to end: devices, a context, tensors, a
 * recorder, every op (text, vision, pos-embed, audio) checked against the
 * float64 oracle, the plan query, and bad input reported by status and
 * message. Exit status 0 when every check passes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_oracle.h"
#include "vkattn/vkattn.h"

static int failures = 0;

#define CHECK(cond, ...)                                       \
  do {                                                         \
    if (!(cond)) {                                             \
      fprintf(stderr, "c_api_test:%d: %s: ", __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                            \
      fprintf(stderr, "\n");                                   \
      ++failures;                                              \
    }                                                          \
  } while (0)

#define CHECK_OK(call) CHECK((call) == VKATTN_OK, "%s", vkattn_last_error())

static uint32_t rng_state = 12345u;
static float next_random(void) { /* uniform in [-1, 1) */
  rng_state = rng_state * 1664525u + 1013904223u;
  return (float)(rng_state >> 8) / (float)(1u << 23) - 1.0f;
}

static float* random_floats(size_t n, float scale) {
  float* x = malloc(n * sizeof *x);
  for (size_t i = 0; i < n; ++i) x[i] = scale * next_random();
  return x;
}

/* A new f32 tensor of `shape` holding `data` (n elements). */
static vkattn_tensor tensor_with(vkattn_context ctx, const uint64_t* shape, uint32_t rank, const float* data,
                                 size_t n) {
  vkattn_tensor t = NULL;
  CHECK_OK(vkattn_tensor_create(ctx, VKATTN_F32, shape, rank, &t));
  if (data) CHECK_OK(vkattn_upload(ctx, t, data, n * sizeof(float)));
  return t;
}

static float* download(vkattn_context ctx, vkattn_tensor t) {
  const size_t bytes = vkattn_tensor_bytes(t);
  float* out = malloc(bytes);
  CHECK_OK(vkattn_download(ctx, t, out, bytes));
  return out;
}

/* Frees what a check allocated: host arrays, then tensors (NULL-terminated lists). */
static void release(float** arrays, vkattn_tensor* tensors) {
  for (; *arrays; ++arrays) free(*arrays);
  for (; *tensors; ++tensors) vkattn_tensor_destroy(*tensors);
}

static void check_error(const char* what, double err) {
  const double tol = c_oracle_tolerance_f32();
  CHECK(err <= tol, "%s: error %.3g against the oracle, tolerance %.3g", what, err, tol);
  printf("%-10s max relative error %.2e (tolerance %.1e)\n", what, err, tol);
}

static void text(vkattn_context ctx, vkattn_recorder rec) {
  const uint32_t kv_len = 40, start_pos = 36;
  vkattn_text_params p = {0};
  p.batch = 1;
  p.seq_len = 4;
  p.num_heads = 4;
  p.num_kv_heads = 2;
  p.head_dim = 32;
  p.causal = 1;
  p.kv_capacity = 40;
  p.kv_len = &kv_len;
  p.kv_len_count = 1;
  p.start_pos = &start_pos;
  p.start_pos_count = 1;
  const uint64_t qs[4] = {1, 4, 4, 32}, ks[4] = {1, 40, 2, 32};
  const size_t nq = 4 * 4 * 32, nk = 40 * 2 * 32;
  float *q = random_floats(nq, 2.0f), *k = random_floats(nk, 2.0f), *v = random_floats(nk, 1.0f);
  vkattn_text_tensors t = {0};
  t.q = tensor_with(ctx, qs, 4, q, nq);
  t.k = tensor_with(ctx, ks, 4, k, nk);
  t.v = tensor_with(ctx, ks, 4, v, nk);
  t.out = tensor_with(ctx, qs, 4, NULL, 0);
  vkattn_call_info info;
  CHECK_OK(vkattn_text_attention(rec, &p, &t, NULL, &info));
  CHECK_OK(vkattn_recorder_run(rec));
  CHECK(strlen(info.variant) > 0, "expected the chosen variant's name");
  float* got = download(ctx, t.out);
  check_error("text", c_oracle_text_error(&p, q, k, v, got));

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

  /* Bad input: a status and a message naming the parameter. */
  p.num_kv_heads = 3;
  CHECK(vkattn_text_attention(rec, &p, &t, NULL, NULL) == VKATTN_INVALID_ARGUMENT, "num_kv_heads 3 of 4 heads");
  CHECK(strstr(vkattn_last_error(), "num_kv_heads") != NULL, "message: %s", vkattn_last_error());
  CHECK(vkattn_text_attention(rec, NULL, &t, NULL, NULL) == VKATTN_INVALID_ARGUMENT, "NULL params");
  CHECK(strstr(vkattn_last_error(), "params: expected non-null") != NULL, "message: %s", vkattn_last_error());

  free(json);
  release((float*[]){got, q, k, v, NULL}, (vkattn_tensor[]){t.q, t.k, t.v, t.out, NULL});
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
  release((float*[]){got, q, k, v, NULL}, (vkattn_tensor[]){t.q, t.k, t.v, t.out, NULL});
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
  release((float*[]){got, hidden, table, NULL}, (vkattn_tensor[]){t.hidden, t.table, NULL});
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
  release((float*[]){got, q, k, v, scale, rel, NULL},
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
  float* arrays[] = {first, second, zeros, got, o, NULL};
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
  vkattn_recorder rec = NULL;
  CHECK_OK(vkattn_recorder_create(ctx, &rec));

  text(ctx, rec);
  CHECK_OK(vkattn_recorder_reset(rec));
  vision(ctx, rec);
  CHECK_OK(vkattn_recorder_reset(rec));
  pos_embed(ctx, rec);
  CHECK_OK(vkattn_recorder_reset(rec));
  audio(ctx, rec);
  CHECK_OK(vkattn_recorder_reset(rec));
  kv_append_c(ctx, rec);

  vkattn_context_options bad = {"no-such-device-xyz", -1};
  vkattn_context other = NULL;
  CHECK(vkattn_context_create(&bad, &other) == VKATTN_INVALID_ARGUMENT && other == NULL, "unknown device");
  CHECK(strstr(vkattn_last_error(), "no-such-device-xyz") != NULL, "message: %s", vkattn_last_error());

  vkattn_recorder_destroy(rec);
  vkattn_context_destroy(ctx);
  printf("%s\n", failures ? "FAILED" : "all checks passed");
  return failures ? 1 : 0;
}

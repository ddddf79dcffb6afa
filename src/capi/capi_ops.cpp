// The C API's ops and the "can this device run this call" queries.
#include <fmt/format.h>

#include "capi/capi_params.hpp"
#include "capi/capi_support.hpp"
#include "vkattn/plan.hpp"
#include "vkattn/audio.hpp"
#include "vkattn/text.hpp"
#include "vkattn/vision.hpp"

using vkattn::capi::guarded;
using vkattn::capi::require;

using vkattn::capi::require_op;
using vkattn::capi::tensor_of;

using namespace vkattn;

extern "C" {

vkattn_status vkattn_text_attention(vkattn_recorder rec, const vkattn_text_params* params,
                                    const vkattn_text_tensors* tensors, const vkattn_plan_options* options,
                                    vkattn_call_info* info) {
  return guarded([&] {
    require_op(rec, params, tensors);
    TextAttentionTensors t;
    t.q = tensor_of(tensors->q);
    t.k = tensor_of(tensors->k);
    t.v = tensor_of(tensors->v);
    t.out = tensor_of(tensors->out);
    t.page_table = tensor_of(tensors->page_table);
    t.kv_len = tensor_of(tensors->kv_len);
    t.start_pos = tensor_of(tensors->start_pos);
    t.kv_start = tensor_of(tensors->kv_start);
    t.indirect = tensor_of(tensors->indirect);
    t.k_scale = tensor_of(tensors->k_scale);
    t.v_scale = tensor_of(tensors->v_scale);
    t.hot_k = tensor_of(tensors->hot_k);
    t.hot_v = tensor_of(tensors->hot_v);
    const auto r = text_attention(*rec->recorder, capi::text_params_of(*params), t, capi::plan_options_of(options));
    capi::fill_info(info, r);
  });
}

vkattn_status vkattn_kv_append(vkattn_recorder rec, const vkattn_kv_append_params* params,
                               const vkattn_kv_append_tensors* tensors) {
  return guarded([&] {
    require_op(rec, params, tensors);
    KvAppendTensors t;
    t.k = tensor_of(tensors->k);
    t.v = tensor_of(tensors->v);
    t.cache_k = tensor_of(tensors->cache_k);
    t.cache_v = tensor_of(tensors->cache_v);
    t.k_scale = tensor_of(tensors->k_scale);
    t.v_scale = tensor_of(tensors->v_scale);
    t.page_table = tensor_of(tensors->page_table);
    t.positions = tensor_of(tensors->positions);
    t.hot_k = tensor_of(tensors->hot_k);
    t.hot_v = tensor_of(tensors->hot_v);
    kv_append(*rec->recorder, capi::kv_append_params_of(*params), t);
  });
}

vkattn_kv_append_params vkattn_kv_append_params_default(void) {
  const KvAppendParams d;
  vkattn_kv_append_params c{};
  c.batch = d.batch;
  c.tokens = d.tokens;
  c.num_kv_heads = d.num_kv_heads;
  c.head_dim = d.head_dim;
  c.layout = static_cast<vkattn_kv_layout>(d.layout);
  c.kv_capacity = d.kv_capacity;
  c.num_pages = d.num_pages;
  c.max_pages = d.max_pages;
  c.quant_group = d.quant_group;
  c.hot_window = d.hot_window;
  c.cold_layout = static_cast<vkattn_kv_layout>(d.cold_layout);
  return c;  // positions NULL: {0}, as the default; pages NULL
}

vkattn_status vkattn_vision_attention(vkattn_recorder rec, const vkattn_vision_params* params,
                                      const vkattn_vision_tensors* tensors, const vkattn_plan_options* options,
                                      vkattn_call_info* info) {
  return guarded([&] {
    require_op(rec, params, tensors);
    const VisionAttentionTensors t{tensor_of(tensors->q), tensor_of(tensors->k), tensor_of(tensors->v),
                                   tensor_of(tensors->out)};
    const auto r =
        vision_attention(*rec->recorder, capi::vision_params_of(*params), t, capi::plan_options_of(options));
    capi::fill_info(info, r);
  });
}

vkattn_status vkattn_pos_embed_add(vkattn_recorder rec, const vkattn_pos_embed_params* params,
                                   const vkattn_pos_embed_tensors* tensors) {
  return guarded([&] {
    require_op(rec, params, tensors);
    const PosEmbedParams p{params->patches, params->hidden_size, params->pos_size, params->patches_x};
    pos_embed_add(*rec->recorder, p, {tensor_of(tensors->hidden), tensor_of(tensors->table)});
  });
}

vkattn_audio_params vkattn_audio_params_default(void) {
  const AudioAttentionParams d;
  return {d.frames, d.num_heads,  d.head_dim,   d.chunk, d.max_past, d.max_future, d.logit_cap,
          d.scale_keys, d.include_past_edge};
}

vkattn_status vkattn_audio_attention(vkattn_recorder rec, const vkattn_audio_params* params,
                                     const vkattn_audio_tensors* tensors, const vkattn_plan_options* options,
                                     vkattn_call_info* info) {
  return guarded([&] {
    require_op(rec, params, tensors);
    const AudioAttentionParams p = capi::audio_params_of(*params);
    const AudioAttentionTensors t{tensor_of(tensors->q),       tensor_of(tensors->k),       tensor_of(tensors->v),
                                  tensor_of(tensors->per_dim_scale), tensor_of(tensors->rel_pos), tensor_of(tensors->out)};
    const auto r = audio_attention(*rec->recorder, p, t, capi::plan_options_of(options));
    capi::fill_info(info, r);
  });
}

vkattn_status vkattn_plan_text(vkattn_context ctx, const vkattn_text_params* params, vkattn_dtype q, vkattn_dtype kv,
                               const vkattn_plan_options* options, char* json, size_t capacity, size_t* length) {
  return guarded([&] {
    require(ctx, "ctx");
    require(params, "params");
    const TextTensorTypes types{capi::dtype_of(q, "q"), capi::dtype_of(kv, "kv"), capi::dtype_of(q, "q"), false};
    const Plan plan =
        vkattn::plan_text(ctx->context->caps(), capi::text_params_of(*params), types, capi::plan_options_of(options));
    capi::write_json(to_json(plan), json, capacity, length);
  });
}

vkattn_status vkattn_plan_vision(vkattn_context ctx, const vkattn_vision_params* params, vkattn_dtype dtype,
                                 const vkattn_plan_options* options, char* json, size_t capacity, size_t* length) {
  return guarded([&] {
    require(ctx, "ctx");
    require(params, "params");
    const VisionAttentionParams p = capi::vision_params_of(*params);
    const VisionTensorTypes types{capi::dtype_of(dtype, "dtype"), capi::dtype_of(dtype, "dtype")};
    const Plan plan = vkattn::plan_vision(ctx->context->caps(), p, types, capi::plan_options_of(options));
    capi::write_json(to_json(plan), json, capacity, length);
  });
}

}  // extern "C"

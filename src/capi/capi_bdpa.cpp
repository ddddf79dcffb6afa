// The C API's BDPA calls: attention, the GPU builder, the host index check and
// the "can this device run it" plan query.
#include "capi/capi_params.hpp"
#include "capi/capi_support.hpp"
#include "vkattn/bdpa.hpp"
#include "vkattn/plan.hpp"

using vkattn::capi::guarded;
using vkattn::capi::require;
using vkattn::capi::require_op;
using vkattn::capi::tensor_of;

using namespace vkattn;

static_assert(VKATTN_ROPE_INTERLEAVED == static_cast<int>(RopePairing::interleaved),
              "vkattn_rope_pairing follows vkattn::RopePairing");

extern "C" {

vkattn_status vkattn_bdpa_attention(vkattn_recorder rec, const vkattn_bdpa_params* params,
                                    const vkattn_bdpa_tensors* tensors, const vkattn_plan_options* options,
                                    vkattn_call_info* info) {
  return guarded([&] {
    require_op(rec, params, tensors);
    BdpaTensors t;
    t.q = tensor_of(tensors->q);
    t.basis_k = tensor_of(tensors->basis_k);
    t.basis_v = tensor_of(tensors->basis_v);
    t.residual_k = tensor_of(tensors->residual_k);
    t.residual_v = tensor_of(tensors->residual_v);
    t.residual_k_scale = tensor_of(tensors->residual_k_scale);
    t.residual_v_scale = tensor_of(tensors->residual_v_scale);
    t.index = tensor_of(tensors->index);
    t.rope_cos = tensor_of(tensors->rope_cos);
    t.rope_sin = tensor_of(tensors->rope_sin);
    t.out = tensor_of(tensors->out);
    t.kv_len = tensor_of(tensors->kv_len);
    t.start_pos = tensor_of(tensors->start_pos);
    const auto r = bdpa_attention(*rec->recorder, capi::bdpa_params_of(*params), t, capi::plan_options_of(options));
    capi::fill_info(info, r);
  });
}

vkattn_status vkattn_bdpa_build(vkattn_recorder rec, const vkattn_bdpa_build_params* params,
                                const vkattn_bdpa_build_tensors* tensors) {
  return guarded([&] {
    require_op(rec, params, tensors);
    BdpaBuildTensors t;
    t.k = tensor_of(tensors->k);
    t.v = tensor_of(tensors->v);
    t.token_ids = tensor_of(tensors->token_ids);
    t.kv_len = tensor_of(tensors->kv_len);
    t.basis_k = tensor_of(tensors->basis_k);
    t.basis_v = tensor_of(tensors->basis_v);
    t.residual_k = tensor_of(tensors->residual_k);
    t.residual_v = tensor_of(tensors->residual_v);
    t.residual_k_scale = tensor_of(tensors->residual_k_scale);
    t.residual_v_scale = tensor_of(tensors->residual_v_scale);
    t.index = tensor_of(tensors->index);
    t.num_basis = tensor_of(tensors->num_basis);
    bdpa_build(*rec->recorder, capi::bdpa_build_params_of(*params), t);
  });
}

vkattn_status vkattn_check_bdpa_index(const vkattn_bdpa_params* params, const uint32_t* index, size_t count) {
  return guarded([&] {
    require(params, "params");
    if (count) require(index, "index");
    check_bdpa_index(capi::bdpa_params_of(*params), std::vector<uint32_t>(index, index + count));
  });
}

vkattn_status vkattn_plan_bdpa(vkattn_context ctx, const vkattn_bdpa_params* params, vkattn_dtype q,
                               vkattn_dtype basis, const vkattn_plan_options* options, char* json, size_t capacity,
                               size_t* length) {
  return guarded([&] {
    require(ctx, "ctx");
    require(params, "params");
    // Host lengths, as bdpa_attention plans a call without a length buffer; the output in Q's dtype.
    const DType q_type = capi::dtype_of(q, "q");
    const Plan plan = plan_bdpa(ctx->context->caps(), capi::bdpa_params_of(*params),
                                BdpaTensorTypes{q_type, capi::dtype_of(basis, "basis"), q_type, false},
                                capi::plan_options_of(options));
    capi::write_json(to_json(plan), json, capacity, length);
  });
}

}  // extern "C"

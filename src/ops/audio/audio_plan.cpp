#include "ops/audio/audio_plan.hpp"

#include "ops/dtype_code.hpp"
#include "ops/plan_check.hpp"
#include "planner/audio_planner.hpp"
#include "planner/plan_render.hpp"
#include "shaders/audio_interface.h"
#include "vk/runtime.hpp"
#include "vkattn/plan.hpp"

namespace vkattn {

AudioTensorTypes audio_tensor_types(const AudioAttentionTensors& t) { return {t.q.dtype(), t.out.dtype()}; }

Plan plan_audio(const DeviceCaps& caps, const AudioAttentionParams& p, const AudioTensorTypes& types,
                const PlanOptions& options) {
  const planner::AudioPlan ap = planner::plan_audio(caps, types.in, options);
  Plan plan = planner::plan_header(PlanFamily::audio, ap.variant, ap);
  plan.geometry.workgroup_size = ap.workgroup_size;
  plan.geometry.query_rows = 1;
  plan.geometry.head_group = 1;
  plan.geometry.tile_keys = ap.tile_keys;
  plan.geometry.acc_chunks = (p.head_dim / 4 + ap.workgroup_size - 1) / ap.workgroup_size;
  PlanDispatch d;
  d.module = "audio_attention";
  d.spec_constants.assign(AUDIO_SC_COUNT, 0);
  d.spec_constants[AUDIO_SC_HEAD_DIM] = p.head_dim;
  d.spec_constants[AUDIO_SC_WG_SIZE] = ap.workgroup_size;
  d.spec_constants[AUDIO_SC_TILE] = ap.tile_keys;
  d.spec_constants[AUDIO_SC_IN_TYPE] = dtype_code(types.in);
  d.spec_constants[AUDIO_SC_OUT_TYPE] = dtype_code(types.out);
  d.spec_constants[AUDIO_SC_ACC_CHUNKS] = plan.geometry.acc_chunks;
  // One workgroup per (frame, head); RecorderImpl rejects frame counts beyond
  // the device's workgroup-count limit with an Error naming the counts.
  d.grid[0] = p.frames;
  d.grid[1] = p.num_heads;
  plan.dispatches.push_back(std::move(d));
  return plan;
}

namespace audio {

const planner::CachedPlan& cached_plan(vk::Runtime& rt, const AudioAttentionParams& p, const AudioTensorTypes& types,
                                       const PlanOptions& options) {
  const auto key = planner::plan_key(rt.id(), PlanFamily::audio,
                                     {p.frames, p.num_heads, p.head_dim, uint32_t(types.in), uint32_t(types.out)}, options);
  return ops::cached_or_planned(key, rt, [&] { return plan_audio(rt.caps(), p, types, options); },
                                [](const PlanDispatch&) { return vk::ShaderInterface{AUDIO_BINDINGS, sizeof(AudioPush)}; });
}

}  // namespace audio
}  // namespace vkattn

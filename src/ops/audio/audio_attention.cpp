// Audio block-local attention: validate -> plan -> cached pipeline -> bind -> record.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>

#include "ops/audio/audio_validate.hpp"
#include "ops/audio/audio_plan.hpp"
#include "ops/plan_check.hpp"
#include "planner/audio_planner.hpp"
#include "shaders/audio_interface.h"
#include "vk/recorder_impl.hpp"
#include "vk/runtime.hpp"
#include "vkattn/context.hpp"
#include "vkattn/error.hpp"
#include "vkattn/plan.hpp"
#include "vkattn/recorder.hpp"

namespace vkattn {

static_assert(sizeof(audio::AudioPush) == 12 * 4, "AudioPush must mirror the GLSL push-constant block");

namespace {

// Records a plan already checked against this call and device, with its pipeline.
AudioCallInfo record_checked(vk::RecorderImpl& rec, const planner::CachedPlan& cached, const AudioAttentionParams& p,
                             const AudioAttentionTensors& t) {
  audio::AudioPush push{};
  push.frames = p.frames;
  push.heads = p.num_heads;
  push.chunk = p.chunk;
  push.max_past = p.max_past;
  push.max_future = p.max_future;
  push.past_reach = p.include_past_edge ? int(p.max_past) : int(p.max_past) - 1;
  push.logit_cap = p.logit_cap;
  push.q_base = static_cast<float>(1.0 / std::sqrt(double(p.head_dim)) / std::numbers::ln2);
  push.k_factor = p.scale_keys ? static_cast<float>(std::log1p(std::numbers::e) / std::numbers::ln2) : 1.0f;

  std::array<vk::BufferRef, AUDIO_BINDINGS> buffers{};
  buffers[AUDIO_BIND_Q] = vk::ref(t.q, vk::Access::read);
  buffers[AUDIO_BIND_K] = vk::ref(t.k, vk::Access::read);
  buffers[AUDIO_BIND_V] = vk::ref(t.v, vk::Access::read);
  buffers[AUDIO_BIND_PER_DIM_SCALE] = vk::ref(t.per_dim_scale, vk::Access::read);
  buffers[AUDIO_BIND_REL_POS] = vk::ref(t.rel_pos, vk::Access::read);
  buffers[AUDIO_BIND_O] = vk::ref(t.out, vk::Access::write);
  const uint32_t* grid = cached.plan.dispatches[0].grid;
  rec.dispatch(*cached.pipelines[0], buffers, std::as_bytes(std::span(&push, 1)), grid[0], grid[1], grid[2]);
  return {cached.plan.variant, cached.plan.reason, cached.plan.warnings};
}

}  // namespace

std::vector<std::string> audio_variant_names() { return planner::audio_variants(); }

AudioCallInfo record(Recorder& recorder, const Plan& plan, const AudioAttentionParams& p,
                     const AudioAttentionTensors& t) {
  vk::Runtime& rt = recorder.context().runtime();
  audio::validate(p, t, rt.caps());
  const AudioTensorTypes types = audio_tensor_types(t);
  return ops::record_from_plan<AudioCallInfo>(
      plan, PlanFamily::audio, rt.caps(),
      [&](const PlanOptions& o) -> const planner::CachedPlan& { return audio::cached_plan(rt, p, types, o); },
      [&](const planner::CachedPlan& c) { return record_checked(recorder.impl(), c, p, t); });
}

AudioCallInfo audio_attention(Recorder& recorder, const AudioAttentionParams& p, const AudioAttentionTensors& t,
                              const PlanOptions& options) {
  vk::Runtime& rt = recorder.context().runtime();
  audio::validate(p, t, rt.caps());
  return record_checked(recorder.impl(), audio::cached_plan(rt, p, audio_tensor_types(t), options), p, t);
}

AudioCallInfo audio_attention(Recorder& rec, const AudioAttentionParams& p, const AudioAttentionTensors& t) {
  return audio_attention(rec, p, t, PlanOptions{});
}

}  // namespace vkattn

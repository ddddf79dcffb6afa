// Audio block-local attention: validate -> variant -> cached pipeline -> bind -> record.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>

#include "ops/audio/audio_validate.hpp"
#include "planner/selection_log.hpp"
#include "shaders/audio_interface.h"
#include "vk/recorder_impl.hpp"
#include "vk/runtime.hpp"
#include "vkattn/context.hpp"
#include "vkattn/error.hpp"
#include "vkattn/plan.hpp"
#include "vkattn/recorder.hpp"

namespace vkattn {

namespace {

// One kernel per input dtype: a query sees at most max_past + max_future + 1
// keys, so one workgroup per (frame, head) with a small key tile is the whole
// design space worth having; there is nothing for a planner to choose.
constexpr uint32_t kTile = 32;
constexpr uint32_t kWorkgroup = 64;

std::string variant_name(DType t) { return fmt::format("audio_block_local_{}", to_string(t)); }

}  // namespace

std::vector<std::string> audio_variant_names() { return {variant_name(DType::f32), variant_name(DType::f16)}; }

AudioCallInfo audio_attention(Recorder& recorder, const AudioAttentionParams& p, const AudioAttentionTensors& t,
                              const PlanOptions& options) {
  vk::RecorderImpl& rec = recorder.impl();
  vk::Runtime& rt = recorder.context().runtime();
  const DeviceCaps& caps = rt.caps();
  audio::validate(p, t, caps);

  AudioCallInfo info;
  info.variant = variant_name(t.q.dtype());
  info.reason = "the block-local kernel for this dtype";
  if (!options.variant.empty() && options.variant != info.variant) {
    const auto names = audio_variant_names();
    const bool known = std::find(names.begin(), names.end(), options.variant) != names.end();
    std::string rejected =
        known ? fmt::format("variant '{}' rejected: takes {} inputs, call has {}", options.variant,
                            options.variant.substr(options.variant.rfind('_') + 1), to_string(t.q.dtype()))
              : fmt::format("variant: expected one of {}, got '{}'", fmt::join(names, ", "), options.variant);
    if (options.strict) throw Error(known ? ErrorKind::unsupported : ErrorKind::invalid_argument, rejected);
    info.warnings.push_back(rejected + "; falling back to " + info.variant);
    planner::warn_once(info.warnings.back());
  } else if (!options.variant.empty()) {
    info.reason = "override";
  }
  planner::log_selection_once("audio", info.variant, info.reason);

  const uint32_t wg = std::min(kWorkgroup, caps.max_workgroup_invocations);
  std::vector<uint32_t> spec(AUDIO_SC_COUNT, 0);
  spec[AUDIO_SC_HEAD_DIM] = p.head_dim;
  spec[AUDIO_SC_WG_SIZE] = wg;
  spec[AUDIO_SC_TILE] = kTile;
  spec[AUDIO_SC_IN_TYPE] = t.q.dtype() == DType::f16 ? AUDIO_DT_F16 : AUDIO_DT_F32;
  spec[AUDIO_SC_OUT_TYPE] = t.out.dtype() == DType::f16 ? AUDIO_DT_F16 : AUDIO_DT_F32;
  spec[AUDIO_SC_ACC_CHUNKS] = (p.head_dim / 4 + wg - 1) / wg;
  const vk::ShaderInterface iface{AUDIO_BINDINGS, sizeof(audio::AudioPush)};
  const vk::Pipeline& pipeline = rt.pipelines().get({"audio_attention", spec, 0}, iface);

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
  // One workgroup per (frame, head); RecorderImpl rejects frame counts beyond
  // the device's workgroup-count limit with an Error naming the counts.
  rec.dispatch(pipeline, buffers, std::as_bytes(std::span(&push, 1)), p.frames, p.num_heads, 1);
  return info;
}

AudioCallInfo audio_attention(Recorder& rec, const AudioAttentionParams& p, const AudioAttentionTensors& t) {
  return audio_attention(rec, p, t, PlanOptions{});
}

}  // namespace vkattn

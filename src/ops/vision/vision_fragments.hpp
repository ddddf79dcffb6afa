// Vision attention on a flash engine of text prefill (flash_coopmat.comp, or
// flash_workgroup.comp for the workgroup-matrix rows): a vision call is one bidirectional sequence of
// `patches` queries and keys whose every head is its own KV head, and PHD or
// HPD is only a choice of row strides.
#pragma once

#include "planner/vision_planner.hpp"
#include "vk/recorder_impl.hpp"
#include "vk/runtime.hpp"
#include "vkattn/plan.hpp"
#include "vkattn/vision.hpp"

namespace vkattn::vision {

// Whether a plan's dispatch runs the text engine (text bindings and push constants).
bool on_text_engine(const PlanDispatch& d);

// The dispatch of a plan whose kind runs a text engine
// (planner::runs_text_engine): the text engine's specialization
// constants and grid; throws Error when the grid passes the device's limit.
PlanDispatch fragments_dispatch(const planner::VisionPlan& plan, const DeviceCaps& caps, const VisionAttentionParams& p,
                                const VisionTensorTypes& types);

// Records that dispatch with its pipeline; p and t are validated.
void record_fragments(vk::RecorderImpl& rec, vk::Runtime& rt, const vk::Pipeline& pipeline, const PlanDispatch& d,
                      const VisionAttentionParams& p, const VisionAttentionTensors& t);

}  // namespace vkattn::vision

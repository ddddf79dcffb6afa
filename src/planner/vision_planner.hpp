// Chooses a vision-attention variant for a device and call shape: a pure
// function of DeviceCaps, so it is tested on synthetic devices and caps files.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "planner/vision_variants.hpp"
#include "vkattn/caps.hpp"
#include "vkattn/plan.hpp"
#include "vkattn/vision.hpp"

namespace vkattn::planner {

struct VisionShape {
  uint32_t patches = 1, num_heads = 1, head_dim = 64;
  DType dtype = DType::f32;
  VisionLayout layout = VisionLayout::phd;
};

// Workgroup geometry of a variant on a device; becomes specialization constants.
struct VisionGeometry {
  uint32_t queries = 1;
  uint32_t tile = 1;
  uint32_t workgroup_size = 64;
  uint32_t acc_chunks = 1;
  uint32_t shared_bytes = 0;
  uint32_t required_subgroup_size = 0;
  uint32_t kv_stages = 0;  // fragments: K/V tile buffers in shared memory (0: other kinds)
};

struct VisionGeometryOrReason {
  std::optional<VisionGeometry> geometry;
  std::string reason;
};
VisionGeometryOrReason vision_geometry(const VisionVariant& v, const DeviceCaps& caps, const VisionShape& shape);

// Bytes vision_attention.comp declares in shared memory (its arrays, shaders/vision_tile_arrays.h).
uint32_t vision_shared_bytes(uint32_t queries, uint32_t head_dim, uint32_t tile, bool f16_shared);

struct VisionPlan {
  const VisionVariant* variant = nullptr;
  VisionGeometry geometry;
  std::string reason;
  std::vector<PlanCandidate> candidates;  // every row of the call's dtype, with why
  std::vector<std::string> warnings;
};

// Honours options.variant (strict: a rejected override throws Error).
VisionPlan plan_vision(const DeviceCaps& caps, const VisionShape& shape, const PlanOptions& options = {});

// The choice as a public Plan without its dispatches; explain and JSON of it.
Plan public_view(const VisionPlan& plan);
std::string explain(const VisionPlan& plan);
std::string plan_to_json(const VisionPlan& plan);

}  // namespace vkattn::planner

// Chooses a BDPA variant for a device and call shape: a pure function of
// DeviceCaps (tested on synthetic devices), through the shared selection
// (src/planner/selection.cpp: variant or kernel path, strict or one warning).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "planner/bdpa_variants.hpp"
#include "vkattn/caps.hpp"
#include "vkattn/plan.hpp"

namespace vkattn::planner {

struct BdpaShape {
  uint32_t batch = 1, seq_len = 1, num_heads = 1, num_kv_heads = 1, head_dim = 64;
  uint32_t kv_len = 0;  // the longest sequence's, or the index capacity when lengths come from the GPU
  DType q = DType::f32, basis = DType::f16;
  Phase phase() const { return seq_len == 1 ? Phase::decode : Phase::prefill; }
};

struct BdpaGeometry {
  uint32_t q_pos = 1, head_group = 1, tile_keys = 16, workgroup_size = 128, acc_chunks = 1, splits = 1;
  uint32_t shared_bytes = 0;
  uint32_t rows() const { return q_pos * head_group; }
};

struct BdpaGeometryOrReason {
  std::optional<BdpaGeometry> geometry;
  std::string reason;
};
BdpaGeometryOrReason bdpa_geometry(const BdpaVariant& v, const DeviceCaps& caps, const BdpaShape& shape);

struct BdpaPlan {
  const BdpaVariant* variant = nullptr;
  BdpaGeometry geometry;
  std::string reason;
  std::vector<PlanCandidate> candidates;
  std::vector<std::string> warnings;
};

// Honours options.variant / options.path, and options.splits for split rows;
// tile_keys and rows are an Error naming them (sized from shared memory).
BdpaPlan plan_bdpa(const DeviceCaps& caps, const BdpaShape& shape, const PlanOptions& options = {});

// The choice as a public Plan without its dispatches; the ops add them.
Plan public_view(const BdpaPlan& plan);

}  // namespace vkattn::planner

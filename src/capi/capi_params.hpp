// The C API's parameter structs as the C++ API's: one conversion, used by the
// library's C entry points and by the C test's oracle.
#pragma once

#include <fmt/format.h>

#include <vector>

#include "capi/capi_support.hpp"
#include "vkattn/audio.hpp"
#include "vkattn/bdpa.hpp"
#include "vkattn/error.hpp"
#include "vkattn/kvcache.hpp"
#include "vkattn/text.hpp"
#include "vkattn/vision.hpp"
#include "vkattn/vkattn.h"

namespace vkattn::capi {

inline std::vector<uint32_t> per_sequence(const uint32_t* values, uint32_t count, const char* name) {
  if (count == 0) return {0};
  if (!values) throw Error(ErrorKind::invalid_argument, fmt::format("{}: expected non-null, got NULL", name));
  return std::vector<uint32_t>(values, values + count);
}

static_assert(VKATTN_KV_TIERED == static_cast<int>(KvLayout::tiered), "vkattn_kv_layout follows vkattn::KvLayout");

inline KvLayout kv_layout_of(vkattn_kv_layout l, const char* name) {
  if (static_cast<unsigned>(l) > VKATTN_KV_TIERED)
    throw Error(ErrorKind::invalid_argument,
                fmt::format("{}: expected 0 (contiguous), 1 (ring), 2 (paged) or 3 (tiered), got {}", name, int(l)));
  return static_cast<KvLayout>(l);
}

// The fields text and BDPA calls share (the same names in the C and C++ structs).
template <class CParams, class Params>
Params attention_params_of(const CParams& c) {
  Params p;
  p.batch = c.batch;
  p.seq_len = c.seq_len;
  p.num_heads = c.num_heads;
  p.num_kv_heads = c.num_kv_heads;
  p.head_dim = c.head_dim;
  p.causal = c.causal != 0;
  p.window = c.window;
  p.softcap = c.softcap;
  if (c.scale != 0.0f) p.scale = c.scale;
  p.kv_capacity = c.kv_capacity;
  p.kv_len = per_sequence(c.kv_len, c.kv_len_count, "kv_len");
  p.start_pos = per_sequence(c.start_pos, c.start_pos_count, "start_pos");
  return p;
}

inline TextAttentionParams text_params_of(const vkattn_text_params& c) {
  auto p = attention_params_of<vkattn_text_params, TextAttentionParams>(c);
  p.layout = kv_layout_of(c.layout, "layout");
  p.num_pages = c.num_pages;
  p.max_pages = c.max_pages;
  p.kv_start = per_sequence(c.kv_start, c.kv_start_count, "kv_start");
  p.kv_quant_group = c.kv_quant_group;
  p.hot_window = c.hot_window;
  p.cold_layout = kv_layout_of(c.cold_layout, "cold_layout");
  return p;
}

inline KvAppendParams kv_append_params_of(const vkattn_kv_append_params& c) {
  KvAppendParams p;
  p.batch = c.batch;
  p.tokens = c.tokens;
  p.num_kv_heads = c.num_kv_heads;
  p.head_dim = c.head_dim;
  p.layout = kv_layout_of(c.layout, "layout");
  // kv_append addresses one tier per call (the hot ring as a ring, the cold
  // tier as its own layout); the tiered layout itself it does not bound.
  if (p.layout == KvLayout::tiered)
    throw Error(ErrorKind::invalid_argument,
                "layout: expected 0 (contiguous), 1 (ring) or 2 (paged) for kv_append (one call per tier of a tiered "
                "cache), got 3 (tiered)");
  p.kv_capacity = c.kv_capacity;
  p.num_pages = c.num_pages;
  p.max_pages = c.max_pages;
  p.quant_group = c.quant_group;
  p.positions = per_sequence(c.positions, c.positions_count, "positions");
  p.pages = c.pages ? &c.pages->allocator : nullptr;
  return p;
}

inline BdpaParams bdpa_params_of(const vkattn_bdpa_params& c) {
  auto p = attention_params_of<vkattn_bdpa_params, BdpaParams>(c);
  p.num_basis = c.num_basis;
  p.num_residual = c.num_residual;
  p.rotary_dim = c.rotary_dim;
  if (static_cast<unsigned>(c.pairing) > VKATTN_ROPE_INTERLEAVED)
    throw Error(ErrorKind::invalid_argument,
                fmt::format("pairing: expected 0 (rotate_half) or 1 (interleaved), got {}", int(c.pairing)));
  p.pairing = static_cast<RopePairing>(c.pairing);
  p.rope_positions = c.rope_positions;
  return p;
}

inline BdpaBuildParams bdpa_build_params_of(const vkattn_bdpa_build_params& c) {
  BdpaBuildParams p;
  p.batch = c.batch;
  p.kv_capacity = c.kv_capacity;
  p.num_kv_heads = c.num_kv_heads;
  p.head_dim = c.head_dim;
  p.vocab_size = c.vocab_size;
  p.kv_len = per_sequence(c.kv_len, c.kv_len_count, "kv_len");
  return p;
}

inline VisionAttentionParams vision_params_of(const vkattn_vision_params& c) {
  VisionAttentionParams p;
  p.patches = c.patches;
  p.num_heads = c.num_heads;
  p.head_dim = c.head_dim;
  if (c.scale != 0.0f) p.scale = c.scale;
  if (static_cast<unsigned>(c.layout) > VKATTN_VISION_HPD)
    throw Error(ErrorKind::invalid_argument,
                fmt::format("layout: expected 0 (phd) or 1 (hpd), got {}", int(c.layout)));
  p.layout = static_cast<VisionLayout>(c.layout);
  return p;
}

inline AudioAttentionParams audio_params_of(const vkattn_audio_params& c) {
  AudioAttentionParams p;
  p.frames = c.frames;
  p.num_heads = c.num_heads;
  p.head_dim = c.head_dim;
  p.chunk = c.chunk;
  p.max_past = c.max_past;
  p.max_future = c.max_future;
  p.logit_cap = c.logit_cap;
  p.scale_keys = c.scale_keys != 0;
  p.include_past_edge = c.include_past_edge != 0;
  return p;
}

}  // namespace vkattn::capi

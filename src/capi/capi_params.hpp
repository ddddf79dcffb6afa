// The C API's parameter structs as the C++ API's: one conversion, used by the
// library's C entry points and by the C test's oracle.
#pragma once

#include <fmt/format.h>

#include <vector>

#include "vkattn/audio.hpp"
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

inline KvLayout kv_layout_of(vkattn_kv_layout l) {
  if (static_cast<unsigned>(l) > VKATTN_KV_PAGED)
    throw Error(ErrorKind::invalid_argument,
                fmt::format("layout: expected 0 (contiguous), 1 (ring) or 2 (paged), got {}", int(l)));
  return static_cast<KvLayout>(l);
}

inline TextAttentionParams text_params_of(const vkattn_text_params& c) {
  TextAttentionParams p;
  p.batch = c.batch;
  p.seq_len = c.seq_len;
  p.num_heads = c.num_heads;
  p.num_kv_heads = c.num_kv_heads;
  p.head_dim = c.head_dim;
  p.causal = c.causal != 0;
  p.window = c.window;
  p.softcap = c.softcap;
  if (c.scale != 0.0f) p.scale = c.scale;
  p.layout = kv_layout_of(c.layout);
  p.kv_capacity = c.kv_capacity;
  p.num_pages = c.num_pages;
  p.max_pages = c.max_pages;
  p.kv_len = per_sequence(c.kv_len, c.kv_len_count, "kv_len");
  p.start_pos = per_sequence(c.start_pos, c.start_pos_count, "start_pos");
  p.kv_start = per_sequence(c.kv_start, c.kv_start_count, "kv_start");
  p.kv_quant_group = c.kv_quant_group;
  return p;
}

inline KvAppendParams kv_append_params_of(const vkattn_kv_append_params& c) {
  KvAppendParams p;
  p.batch = c.batch;
  p.tokens = c.tokens;
  p.num_kv_heads = c.num_kv_heads;
  p.head_dim = c.head_dim;
  p.layout = kv_layout_of(c.layout);
  p.kv_capacity = c.kv_capacity;
  p.num_pages = c.num_pages;
  p.max_pages = c.max_pages;
  p.quant_group = c.quant_group;
  p.positions = per_sequence(c.positions, c.positions_count, "positions");
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

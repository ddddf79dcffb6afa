// What a text-attention call must do at least: the bytes a perfect kernel
// moves (Q, the visible K/V, O) and the useful floating-point operations.
#pragma once

#include "vkattn/text.hpp"
#include "vkattn/types.hpp"

namespace vkattn::check {

struct TextWork {
  double bytes = 0.0;
  double flops = 0.0;  // 4 * H * S * D per visible key (QK and PV)
};

// Each query row reads the keys it can see (a window caps them; causal
// prefill sees half of its own rows on average).
TextWork text_work(const TextAttentionParams& p, DType q, DType kv, DType out);

}  // namespace vkattn::check

#include "ops/audio/audio_validate.hpp"

#include <fmt/format.h>

#include <cmath>

#include "ops/vision/vision_validate.hpp"
#include "util/checked_size.hpp"
#include "vkattn/error.hpp"

namespace vkattn::audio {

namespace {

[[noreturn]] void bad(const std::string& msg) { throw Error(ErrorKind::invalid_argument, msg); }

}  // namespace

void validate(const AudioAttentionParams& p, const AudioAttentionTensors& t, const DeviceCaps& caps) {
  if (p.frames == 0) bad("frames: expected >= 1, got 0");
  if (p.num_heads == 0) bad("num_heads: expected >= 1, got 0");
  if (p.head_dim == 0 || p.head_dim % 8 != 0 || p.head_dim > 512)
    bad(fmt::format("head_dim: expected a multiple of 8 in [8, 512], got {}", p.head_dim));
  if (p.chunk == 0) bad("chunk: expected >= 1, got 0");
  if (!std::isfinite(p.logit_cap) || p.logit_cap < 0.0f)
    bad(fmt::format("logit_cap: expected a finite value >= 0 (0 = off), got {}", p.logit_cap));
  // Frame and slot arithmetic is signed 32-bit in the kernel.
  const uint64_t reach = uint64_t(p.frames) + p.chunk + p.max_past + p.max_future;
  if (reach >= (1ull << 31))
    bad(fmt::format("frames: expected frames + chunk + max_past + max_future < 2^31, got {}", reach));
  const uint64_t span = uint64_t(p.max_past) + p.max_future + 1;
  const uint64_t row = checked_mul(p.num_heads, p.head_dim, "heads x head_dim");
  if (checked_mul(p.frames, row, "frames x heads x head_dim") >= (1ull << 32) ||
      checked_mul(span, row, "(max_past + max_future + 1) x heads x head_dim") >= (1ull << 32))
    bad("frames: expected frames x heads x head_dim and (max_past + max_future + 1) x heads x head_dim < 2^32");
  const Shape shape{p.frames, p.num_heads, p.head_dim};
  vision::check_tensor("q", t.q, shape, caps);
  vision::check_tensor("k", t.k, shape, caps, t.q.dtype());
  vision::check_tensor("v", t.v, shape, caps, t.q.dtype());
  vision::check_tensor("per_dim_scale", t.per_dim_scale, {p.head_dim}, caps, DType::f32);
  vision::check_tensor("rel_pos", t.rel_pos, {span, p.num_heads, p.head_dim}, caps, t.q.dtype());
  vision::check_tensor("out", t.out, shape, caps);
}

}  // namespace vkattn::audio

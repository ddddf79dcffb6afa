// libFuzzer harness: the argument validation of one op (VKATTN_FUZZ_OP: 0
// text, 1 vision, 2 pos-embed, 3 audio) on params, shapes, dtypes, strides and
// caps decoded from the fuzz bytes, with no device. A call is either rejected
// with a vkattn::Error or accepted; an accepted one must also yield the row
// strides the kernels take, and every tensor must hold what its shape needs.
#include <cstddef>
#include <cstdint>

#include <fmt/format.h>

#include "fuzz_input.hpp"
#include "ops/audio/audio_validate.hpp"
#include "ops/text/text_validate.hpp"
#include "ops/vision/vision_validate.hpp"

namespace vkattn::fuzz {
namespace {

std::vector<uint32_t> per_sequence(Input& in, uint32_t batch) {
  std::vector<uint32_t> v(in.flag() && batch <= 64 ? batch : 1);
  for (auto& x : v) x = in.u32();
  return v;
}

// What an accepted tensor must satisfy whatever the op: its furthest element is inside its bytes.
void require_holds(const Tensor& t) {
  if (!t.valid()) return;
  const uint64_t last = furthest_element(t.shape(), t.strides());
  if (element_count(t.shape()) > 0 && dtype_storage_bytes(t.dtype(), last + 1) > t.bytes()) {
    fmt::print(stderr, "accepted {} {} strides {} in {} bytes\n", to_string(t.dtype()), shape_to_string(t.shape()),
               shape_to_string(t.strides()), t.bytes());
    __builtin_trap();
  }
}

void text(Input& in) {
  TextAttentionParams p;
  p.batch = in.u32();
  p.seq_len = in.u32();
  p.num_heads = in.u32();
  p.num_kv_heads = in.u32();
  p.head_dim = in.u32();
  p.causal = in.flag();
  p.window = in.u32();
  p.softcap = in.real();
  if (in.flag()) p.scale = in.real();
  p.layout = static_cast<KvLayout>(in.byte() % 4);
  p.cold_layout = static_cast<KvLayout>(in.byte() % 4);
  p.hot_window = in.u32();
  p.kv_capacity = in.u32();
  p.num_pages = in.u32();
  p.max_pages = in.u32();
  p.kv_len = per_sequence(in, p.batch);
  p.start_pos = per_sequence(in, p.batch);
  p.kv_start = per_sequence(in, p.batch);
  const DeviceCaps caps = in.caps();
  const bool paged = p.slot_layout() == KvLayout::paged;
  const bool tiered = p.layout == KvLayout::tiered;
  const Shape q{p.batch, p.seq_len, p.num_heads, p.head_dim};
  const Shape kv = paged ? Shape{p.num_pages, p.kv_capacity, p.num_kv_heads, p.head_dim}
                         : Shape{p.batch, p.kv_capacity, p.num_kv_heads, p.head_dim};
  const DType qt = in.dtype(), kt = in.dtype();
  TextAttentionTensors t;
  t.q = in.tensor(q, qt);
  t.k = in.tensor(kv, kt);
  t.v = in.tensor(kv, kt);
  t.out = in.tensor(q, qt);
  t.page_table = in.tensor({p.batch, p.max_pages}, DType::u32);
  if (tiered || in.flag()) {
    t.hot_k = in.tensor({p.batch, p.hot_window, p.num_kv_heads, p.head_dim}, in.dtype());
    t.hot_v = in.tensor({p.batch, p.hot_window, p.num_kv_heads, p.head_dim}, in.dtype());
  }
  t.kv_len = in.tensor({p.batch}, DType::u32);
  t.start_pos = in.tensor({p.batch}, DType::u32);
  try {
    text::validate_params(p);
    text::validate_tensors(p, t, caps);
  } catch (const Error&) {
    return;
  }
  for (const Tensor* x : {&t.q, &t.k, &t.v, &t.out, &t.kv_len, &t.start_pos}) require_holds(*x);
  if (paged) require_holds(t.page_table);  // other layouts ignore it
  if (tiered) {
    require_holds(t.hot_k);
    require_holds(t.hot_v);
  }
  try {
    text::row_strides("q", t.q, q);
    text::row_strides("k", t.k, kv);
    text::row_strides("v", t.v, kv);
    text::row_strides("out", t.out, q);
  } catch (const Error&) {
  }
}

void vision_attention(Input& in) {
  VisionAttentionParams p;
  p.patches = in.u32();
  p.num_heads = in.u32();
  p.head_dim = in.u32();
  if (in.flag()) p.scale = in.real();
  p.layout = in.flag() ? VisionLayout::hpd : VisionLayout::phd;
  const DeviceCaps caps = in.caps();
  const Shape s = p.layout == VisionLayout::phd ? Shape{p.patches, p.num_heads, p.head_dim}
                                                : Shape{p.num_heads, p.patches, p.head_dim};
  const DType dt = in.dtype();
  VisionAttentionTensors t{in.tensor(s, dt), in.tensor(s, dt), in.tensor(s, dt), in.tensor(s, in.dtype())};
  try {
    vision::validate(p, t, caps);
  } catch (const Error&) {
    return;
  }
  for (const Tensor* x : {&t.q, &t.k, &t.v, &t.out}) require_holds(*x);
}

void pos_embed(Input& in) {
  PosEmbedParams p{in.u32(), in.u32(), in.u32(), in.u32()};
  const DeviceCaps caps = in.caps();
  const DType dt = in.dtype();
  PosEmbedTensors t{in.tensor({p.patches, p.hidden_size}, dt), in.tensor({2, p.pos_size, p.hidden_size}, dt)};
  try {
    vision::validate(p, t, caps);
  } catch (const Error&) {
    return;
  }
  require_holds(t.hidden);
  require_holds(t.table);
}

void audio_attention(Input& in) {
  AudioAttentionParams p;
  p.frames = in.u32();
  p.num_heads = in.u32();
  p.head_dim = in.u32();
  p.chunk = in.u32();
  p.max_past = in.u32();
  p.max_future = in.u32();
  p.logit_cap = in.real();
  p.scale_keys = in.flag();
  const DeviceCaps caps = in.caps();
  const Shape s{p.frames, p.num_heads, p.head_dim};
  const DType dt = in.dtype();
  AudioAttentionTensors t;
  t.q = in.tensor(s, dt);
  t.k = in.tensor(s, dt);
  t.v = in.tensor(s, dt);
  t.per_dim_scale = in.tensor({p.head_dim}, DType::f32);
  t.rel_pos = in.tensor({uint64_t(p.max_past) + p.max_future + 1, p.num_heads, p.head_dim}, dt);
  t.out = in.tensor(s, in.dtype());
  try {
    audio::validate(p, t, caps);
  } catch (const Error&) {
    return;
  }
  for (const Tensor* x : {&t.q, &t.k, &t.v, &t.per_dim_scale, &t.rel_pos, &t.out}) require_holds(*x);
}

}  // namespace
}  // namespace vkattn::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  vkattn::fuzz::Input in(data, size);
  constexpr void (*ops[])(vkattn::fuzz::Input&) = {vkattn::fuzz::text, vkattn::fuzz::vision_attention,
                                                    vkattn::fuzz::pos_embed, vkattn::fuzz::audio_attention};
  ops[VKATTN_FUZZ_OP](in);
  return 0;
}

// Vision 2D position-embedding add: validate -> cached pipeline -> bind -> record.
#include <algorithm>
#include <array>

#include "ops/vision/vision_validate.hpp"
#include "shaders/vision_interface.h"
#include "vk/recorder_impl.hpp"
#include "vk/runtime.hpp"
#include "vkattn/context.hpp"
#include "vkattn/recorder.hpp"
#include "vkattn/vision.hpp"

namespace vkattn {

static_assert(sizeof(vision::PosEmbedPush) == 4 * 4, "PosEmbedPush must mirror the GLSL push-constant block");

void pos_embed_add(Recorder& recorder, const PosEmbedParams& p, const PosEmbedTensors& t) {
  vk::RecorderImpl& rec = recorder.impl();
  vk::Runtime& rt = recorder.context().runtime();
  vision::validate(p, t, rt.caps());
  const bool f16 = t.hidden.dtype() == DType::f16;
  const vk::ShaderInterface iface{POSEMBED_BINDINGS, sizeof(vision::PosEmbedPush)};
  const vk::Pipeline& pipe = rt.pipelines().get({"posembed", {f16 ? uint32_t{DTYPE_F16} : uint32_t{DTYPE_F32}}, 0}, iface);
  const uint32_t words = f16 ? p.hidden_size / 2 : p.hidden_size;
  vision::PosEmbedPush push{p.patches, words, p.pos_size, p.patches_x};
  std::array<vk::BufferRef, POSEMBED_BINDINGS> buffers{};
  buffers[POSEMBED_BIND_HIDDEN] = vk::ref(t.hidden, vk::Access::read_write);
  buffers[POSEMBED_BIND_TABLE] = vk::ref(t.table, vk::Access::read);
  const uint64_t total = uint64_t(p.patches) * words;
  // The shader strides over the words, so a capped grid covers any size.
  const uint32_t groups = static_cast<uint32_t>(std::min<uint64_t>((total + POSEMBED_WG - 1) / POSEMBED_WG, 4096));
  rec.dispatch(pipe, buffers, std::as_bytes(std::span(&push, 1)), groups, 1, 1);
}

}  // namespace vkattn

// The BDPA builder: four passes of bdpa_build.comp (see its header comment),
// recorded back to back; the recorder orders them by the buffers they share.
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "ops/bdpa/bdpa_validate.hpp"
#include "ops/recording.hpp"
#include "ops/text/text_validate.hpp"
#include "planner/geometry_rules.hpp"
#include "shaders/bdpa_interface.h"
#include "shaders/text_attention_interface.h"
#include "vk/recorder_impl.hpp"
#include "vk/runtime.hpp"
#include "vkattn/bdpa.hpp"
#include "vkattn/context.hpp"
#include "vkattn/error.hpp"
#include "vkattn/recorder.hpp"

namespace vkattn {

namespace {

// Powers of two (the slot scan and the absmax tree halve them): rows are D/4
// vec4s, so 64 invocations cover D 256; the one-workgroup scan over the
// vocabulary takes as many as the device allows, up to 1024.
constexpr uint32_t kWorkgroupSize = 64;
constexpr uint32_t kMaxScanWorkgroupSize = 1024;

}  // namespace

void bdpa_build(Recorder& recorder, const BdpaBuildParams& p, const BdpaBuildTensors& t) {
  vk::RecorderImpl& rec = recorder.impl();
  vk::Runtime& rt = recorder.context().runtime();
  const DeviceCaps& caps = rt.caps();
  bdpa::validate_build(p, t, caps);

  const uint32_t rows = static_cast<uint32_t>(p.max_rows());  // below 2^32 - 1 (validated)
  const uint32_t max_x = caps.max_workgroup_count[0];
  if (p.num_kv_heads > caps.max_workgroup_count[1])
    throw Error(ErrorKind::unsupported, fmt::format("num_kv_heads: expected at most {} (device limit), got {}",
                                                    caps.max_workgroup_count[1], p.num_kv_heads));
  auto pipeline = [&](uint32_t pass) -> const vk::Pipeline& {
    std::vector<uint32_t> spec(BDPA_BUILD_SC_COUNT, 0);
    spec[BDPA_BUILD_SC_PASS] = pass;
    spec[BDPA_BUILD_SC_WG_SIZE] =
        pass == BDPA_PASS_SLOTS ? std::min(kMaxScanWorkgroupSize, planner::floor_pow2(caps.max_workgroup_invocations))
                                : kWorkgroupSize;
    spec[BDPA_BUILD_SC_HEAD_DIM] = p.head_dim;
    spec[BDPA_BUILD_SC_KV_TYPE] = dtype_code(t.k.dtype());
    spec[BDPA_BUILD_SC_BASIS_TYPE] = dtype_code(t.basis_k.dtype());
    return rt.pipelines().get({"bdpa_build", spec, 0}, {BDPA_BUILD_BINDINGS, sizeof(bdpa::BdpaBuildPush)});
  };
  const vk::Pipeline& link_pass = pipeline(BDPA_PASS_LINK);
  const vk::Pipeline& slots_pass = pipeline(BDPA_PASS_SLOTS);
  const vk::Pipeline& basis_pass = pipeline(BDPA_PASS_BASIS);
  const vk::Pipeline& residual_pass = pipeline(BDPA_PASS_RESIDUAL);

  const VkBuffer placeholder = rt.placeholder_buffer();
  const ops::PerSequence kv_len = ops::per_sequence(rec, p.kv_len, t.kv_len, placeholder);
  bdpa::BdpaBuildPush push{};
  push.batch = p.batch;
  push.capacity = p.kv_capacity;
  push.num_kv_heads = p.num_kv_heads;
  push.vocab_size = p.vocab_size;
  push.kv_len = kv_len.uniform;
  push.flags = kv_len.from_buffer ? BDPA_FLAG_KV_LEN_BUFFER : 0u;
  push.max_rows = rows;
  const auto push_bytes = std::as_bytes(std::span(&push, 1));

  // Scratch tables (see bdpa_interface.h): list heads and slots per token id,
  // list links and tokens per row.
  vk::BufferRef head = rec.scratch(uint64_t(p.vocab_size) * 4), slot = rec.scratch(uint64_t(p.vocab_size) * 4);
  vk::BufferRef link = rec.scratch(uint64_t(rows) * 4), token_of = rec.scratch(uint64_t(rows) * 4);
  head.access = vk::Access::write;
  rec.fill(head, BDPA_NONE);
  // Entries past a sequence's length name no basis row: a later, longer
  // kv_len read from the GPU skips them instead of following stale rows.
  rec.fill(vk::ref(t.index, vk::Access::write), BDPA_NONE);

  // Each pass binds every buffer; `writes` lists the bindings it writes.
  auto bind = [&](std::initializer_list<uint32_t> writes) {
    std::array<vk::BufferRef, BDPA_BUILD_BINDINGS> b{};
    b[BDPA_BUILD_BIND_K] = vk::ref(t.k, vk::Access::read);
    b[BDPA_BUILD_BIND_V] = vk::ref(t.v, vk::Access::read);
    b[BDPA_BUILD_BIND_TOKENS] = vk::ref(t.token_ids, vk::Access::read);
    b[BDPA_BUILD_BIND_KV_LEN] = kv_len.buffer;
    b[BDPA_BUILD_BIND_HEAD] = head;
    b[BDPA_BUILD_BIND_LINK] = link;
    b[BDPA_BUILD_BIND_SLOT] = slot;
    b[BDPA_BUILD_BIND_TOKEN_OF] = token_of;
    b[BDPA_BUILD_BIND_NUM_BASIS] = vk::ref(t.num_basis, vk::Access::read);
    b[BDPA_BUILD_BIND_BASIS_K] = vk::ref(t.basis_k, vk::Access::read);
    b[BDPA_BUILD_BIND_BASIS_V] = vk::ref(t.basis_v, vk::Access::read);
    b[BDPA_BUILD_BIND_RESIDUAL_K] = vk::ref(t.residual_k, vk::Access::read);
    b[BDPA_BUILD_BIND_RESIDUAL_V] = vk::ref(t.residual_v, vk::Access::read);
    b[BDPA_BUILD_BIND_SCALE_K] = vk::ref(t.residual_k_scale, vk::Access::read);
    b[BDPA_BUILD_BIND_SCALE_V] = vk::ref(t.residual_v_scale, vk::Access::read);
    b[BDPA_BUILD_BIND_INDEX] = vk::ref(t.index, vk::Access::read);
    for (uint32_t w : writes) b[w].access = vk::Access::read_write;
    return b;
  };
  const uint32_t row_groups = std::min(rows, max_x);
  rec.dispatch(link_pass, bind({BDPA_BUILD_BIND_HEAD, BDPA_BUILD_BIND_LINK}), push_bytes,
               std::min((rows + kWorkgroupSize - 1) / kWorkgroupSize, max_x), 1, 1);
  rec.dispatch(slots_pass, bind({BDPA_BUILD_BIND_SLOT, BDPA_BUILD_BIND_TOKEN_OF, BDPA_BUILD_BIND_NUM_BASIS}),
               push_bytes, 1, 1, 1);
  rec.dispatch(basis_pass, bind({BDPA_BUILD_BIND_BASIS_K, BDPA_BUILD_BIND_BASIS_V}), push_bytes, row_groups,
               p.num_kv_heads, 1);
  rec.dispatch(residual_pass,
               bind({BDPA_BUILD_BIND_RESIDUAL_K, BDPA_BUILD_BIND_RESIDUAL_V, BDPA_BUILD_BIND_SCALE_K,
                     BDPA_BUILD_BIND_SCALE_V, BDPA_BUILD_BIND_INDEX}),
               push_bytes, row_groups, p.num_kv_heads, 1);
}

}  // namespace vkattn

// Records many vkattn dispatches into one command buffer, with the barriers
// between them, then submits now or later (and again, for replayed decode steps).
#pragma once

#include <vulkan/vulkan.h>

#include <memory>

#include "vkattn/export.hpp"

namespace vkattn {

class Context;
namespace vk {
class RecorderImpl;
}

class VKATTN_API Recorder {
 public:
  // Records into a command buffer of vkattn's own; submit() runs it.
  explicit Recorder(Context& ctx);
  // Records into the caller's command buffer, which must be in the recording
  // state; the caller submits it and must keep this Recorder alive until the
  // work has finished (it owns the descriptor sets the commands use).
  Recorder(Context& ctx, VkCommandBuffer external);
  ~Recorder();
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // Writes a GPU timestamp and returns its index.
  uint32_t timestamp();
  // Orders every command recorded after this behind every command recorded
  // before it, whatever buffers they touch (vkattn already orders calls that
  // share buffers; this is for work that must not overlap, such as timing).
  void barrier();
  // Ends recording (own command buffer) and submits it; returns immediately.
  // May be called again after wait() to replay the same commands.
  void submit();
  // Waits for the last submit; throws Error on device loss.
  void wait();
  // submit() then wait().
  void run();
  // Milliseconds between two timestamps, after wait().
  double elapsed_ms(uint32_t from, uint32_t to);
  // Discards what was recorded so the recorder can record anew.
  void reset();

  Context& context();
  vk::RecorderImpl& impl();

 private:
  std::unique_ptr<vk::RecorderImpl> impl_;
};

}  // namespace vkattn

// Errors thrown by every public vkattn entry point.
#pragma once

#include <stdexcept>
#include <string>

#include "vkattn/export.hpp"

namespace vkattn {

// What went wrong, so callers can react without parsing messages.
enum class ErrorKind {
  invalid_argument,  // a parameter is out of its contract; the message names it
  unsupported,       // valid input the chosen device or variant cannot run
  no_device,         // no Vulkan loader or no usable device
  out_of_memory,     // host or device allocation failed
  device_lost,       // the GPU dropped the device; the context is unusable
  vulkan,            // any other failing VkResult
  io,                // file reading or writing (npy, caps files)
};

class VKATTN_API Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const noexcept { return kind_; }

 private:
  ErrorKind kind_;
};

}  // namespace vkattn

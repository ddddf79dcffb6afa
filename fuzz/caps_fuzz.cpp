// libFuzzer harness: the caps-file reader on arbitrary text, then both
// planners on whatever caps it accepts (they must finish, for any caps, with a
// plan or a vkattn::Error).
#include <cstddef>
#include <cstdint>
#include <string>

#include "planner/text_planner.hpp"
#include "planner/vision_planner.hpp"
#include "vkattn/caps.hpp"
#include "vkattn/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  vkattn::DeviceCaps caps;
  try {
    caps = vkattn::caps_from_json(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const vkattn::Error&) {
    return 0;
  }
  using vkattn::DType;
  const vkattn::planner::TextShape texts[] = {
      {1, 1, 32, 8, 128, 4096, DType::f32, DType::f16},
      {2, 512, 32, 8, 128, 512, DType::f16, DType::f16},
      {1, 0xffffffffu, 8, 1, 64, 0xffffffffu, DType::f32, DType::f32},
  };
  for (const auto& s : texts) {
    try {
      (void)vkattn::planner::plan_text(caps, s);
    } catch (const vkattn::Error&) {
    }
  }
  try {
    (void)vkattn::planner::plan_vision(caps, {2304, 12, 64, DType::f32, vkattn::VisionLayout::phd});
  } catch (const vkattn::Error&) {
  }
  return 0;
}

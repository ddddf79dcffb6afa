// libFuzzer harness: the plan reader (vkattn::plan_from_json) on arbitrary
// text. It must finish with a plan or a vkattn::Error, and a plan it accepts
// must come back unchanged through to_json.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "vkattn/error.hpp"
#include "vkattn/plan.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  vkattn::Plan plan;
  try {
    plan = vkattn::plan_from_json(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const vkattn::Error&) {
    return 0;
  }
  if (!(vkattn::plan_from_json(vkattn::to_json(plan)) == plan)) std::abort();
  return 0;
}

// libFuzzer harness: the .npy reader on arbitrary bytes. Any outcome but a
// vkattn::Error or a well-formed array (and its value conversions) is a finding.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "io/npy.hpp"
#include "vkattn/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const vkattn::io::NpyArray a =
        vkattn::io::parse_npy(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.npy");
    if (a.data.size() != a.elements() * vkattn::io::npy_item_size(a.descr)) __builtin_trap();
    try {
      (void)vkattn::io::as_f32(a);
    } catch (const vkattn::Error&) {
    }
    try {
      (void)vkattn::io::as_u32(a);
    } catch (const vkattn::Error&) {
    }
  } catch (const vkattn::Error&) {
  }
  return 0;
}

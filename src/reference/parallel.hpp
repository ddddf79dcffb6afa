// Splits an oracle's independent output rows across the machine's cores: the
// float64 oracles are written for obvious correctness, and on one core they
// dominate a demo or test on a CPU device.
#pragma once

#include <cstdint>
#include <functional>

namespace vkattn::reference {

// Calls body(begin, end) on disjoint ranges covering [0, n), on up to one
// thread per core, and returns when all are done. Each range writes only its
// own rows, so the result is the same as one thread's, bit for bit.
void parallel_rows(uint64_t n, const std::function<void(uint64_t begin, uint64_t end)>& body);

}  // namespace vkattn::reference

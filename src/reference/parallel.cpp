#include "reference/parallel.hpp"

#include <algorithm>
#include <thread>
#include <vector>

namespace vkattn::reference {

void parallel_rows(uint64_t n, const std::function<void(uint64_t, uint64_t)>& body) {
  const uint64_t threads = std::min<uint64_t>(std::max(1u, std::thread::hardware_concurrency()), n);
  if (threads <= 1) {
    if (n) body(0, n);
    return;
  }
  std::vector<std::jthread> pool;
  const uint64_t per = (n + threads - 1) / threads;
  for (uint64_t begin = per; begin < n; begin += per) pool.emplace_back(body, begin, std::min(n, begin + per));
  body(0, std::min(n, per));
}

}  // namespace vkattn::reference

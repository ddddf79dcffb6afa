#include "check/timing.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

namespace vkattn::check {

double median_replay_ms(Recorder& rec, uint32_t t0, uint32_t t1, int runs) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  for (int i = 0; i < 2 || std::chrono::duration<double, std::milli>(clock::now() - start).count() < kWarmupMs; ++i)
    rec.run();
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    rec.run();
    ms.push_back(rec.elapsed_ms(t0, t1));
  }
  if (ms.empty()) return 0.0;
  std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
  return ms[ms.size() / 2];
}

}  // namespace vkattn::check

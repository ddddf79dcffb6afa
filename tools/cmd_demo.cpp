// `vkattn demo`: the main job on the default device. Model-shaped cases of
// every family (a Llama-3-8B decode step and causal prefill first): the chosen
// variant and why, the error against the float64 oracle, GPU time, effective
// bandwidth and throughput. On a CPU device the sequences are shorter (the
// table says so) so that the demo takes seconds, not minutes.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <tuple>

#include "check/check_case.hpp"
#include "commands.hpp"
#include "vkattn/context.hpp"
#include "vkattn/kvcache.hpp"

namespace vkattn::cli {

namespace {

// A rate column: "-" where the case has no such count or no time.
std::string rate(double amount, double seconds, double unit, int digits) {
  if (amount <= 0 || seconds <= 0) return "-";
  return fmt::format("{:.{}g}", amount / seconds / unit, digits);
}

}  // namespace

void add_demo_command(CLI::App& app, GlobalOptions& g, int& status) {
  auto runs = std::make_shared<int>(0);
  auto* cmd = app.add_subcommand("demo", "Run model-shaped attention of every family, checked and timed");
  cmd->add_option("--runs", *runs, "Timed replays per case, median reported (default: 10 on GPUs, 2 on CPU devices)")
      ->check(CLI::Range(1, 1000));
  cmd->callback([runs, &g, &status] {
    const auto start = std::chrono::steady_clock::now();
    Context ctx(ContextOptions{g.device});
    const check::DemoSize size = check::demo_size_for(ctx.caps());
    const bool cpu = size == check::DemoSize::cpu;
    if (*runs == 0) *runs = cpu ? 2 : 10;
    fmt::print("device: {} ({}, {})\n", ctx.caps().name, ctx.caps().type, ctx.caps().driver_name);
    if (cpu)
      fmt::print("CPU device: shorter sequences than the models' (a GPU runs a 512-token prefill, 2304 vision\n"
                 "patches and 750 audio frames), so the demo takes seconds\n");
    fmt::print("\n{:<46} {:<30} {:>9} {:>10} {:>9} {:>8}  {}\n", "case", "variant", "max err", "GPU ms", "GB/s",
               "TFLOP/s", "why");
    std::vector<check::CheckCase> cases;
    for (const auto& family : check::check_families())
      for (auto& c : check::demo_cases(family, size)) cases.push_back(std::move(c));
    int passed = 0;
    for (size_t i = 0; i < cases.size(); ++i) {
      const auto& c = cases[i];
      fmt::print(stderr, "[{}/{}] case {}\n", i + 1, cases.size(), c.name);
      std::fflush(stderr);
      auto r = c.run(ctx, check::RunOptions{*runs, false});
      if (!r.error.empty()) {
        fmt::print("{:<46} error: {}\n", c.name, r.error);
        continue;
      }
      const double s = r.gpu_ms * 1e-3;
      fmt::print("{:<46} {:<30} {:>9.2e} {:>10.4f} {:>9} {:>8}  {}{}\n", c.name, r.variant, r.cmp.rel_err, r.gpu_ms,
                 rate(r.bytes_moved, s, 1e9, 3), rate(r.flops, s, 1e12, 3), r.reason,
                 r.passed ? "" : "  [FAILED parity]");
      std::fflush(stdout);
      passed += r.passed;
    }
    // What each cache kind costs in memory: the bytes decode reads per token.
    fmt::print("\nKV cache bytes per token per layer (Llama-3-8B: 8 KV heads, head_dim 128; K and V, scales included):\n");
    const uint64_t f16_bytes = kv_bytes_per_token(DType::f16, 8, 128);
    for (auto [kind, dtype, group] : {std::tuple{"f32", DType::f32, 0u}, {"f16", DType::f16, 0u}, {"bf16", DType::bf16, 0u},
                                      {"int8", DType::i8, 0u}, {"int8, scale per 32", DType::i8, 32u},
                                      {"int4", DType::i4, 0u}, {"int4, scale per 32", DType::i4, 32u}}) {
      const uint64_t bytes = kv_bytes_per_token(dtype, 8, 128, group);
      fmt::print("  {:<20} {:>6} bytes  ({:.2f}x f16)\n", kind, bytes, double(bytes) / f16_bytes);
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print("\nmax err: max|gpu - oracle| / max|oracle| against the float64 reference.\n");
    fmt::print("{} of {} cases passed in {:.1f} s\n", passed, cases.size(), seconds);
    status = passed == static_cast<int>(cases.size()) ? 0 : 1;
  });
}

}  // namespace vkattn::cli

// `vkattn demo`: the main job on the default device. Model-shaped cases of
// every family (a Llama-3-8B decode step and 512-token causal prefill first):
// the chosen variant and why, the error against the float64 oracle, GPU time,
// effective bandwidth and throughput.
#include <fmt/format.h>

#include "check/check_case.hpp"
#include "commands.hpp"
#include "vkattn/context.hpp"

namespace vkattn::cli {

void add_demo_command(CLI::App& app, GlobalOptions& g, int& status) {
  auto runs = std::make_shared<int>(0);
  auto* cmd = app.add_subcommand("demo", "Run model-shaped attention of every family, checked and timed");
  cmd->add_option("--runs", *runs, "Timed replays per case, median reported (default: 10 on GPUs, 2 on CPU devices)")
      ->check(CLI::Range(1, 1000));
  cmd->callback([runs, &g, &status] {
    Context ctx(ContextOptions{g.device});
    if (*runs == 0) *runs = ctx.caps().type == "cpu" ? 2 : 10;  // lavapipe runs kernels at CPU speed
    fmt::print("device: {} ({}, {})\n\n", ctx.caps().name, ctx.caps().type, ctx.caps().driver_name);
    fmt::print("{:<46} {:<30} {:>9} {:>10} {:>9} {:>8}  {}\n", "case", "variant", "max err", "GPU ms", "GB/s",
               "TFLOP/s", "why");
    bool ok = true;
    for (const auto& family : check::check_families()) {
      for (const auto& c : check::demo_cases(family)) {
        auto r = c.run(ctx, check::RunOptions{*runs, false});
        if (!r.error.empty()) {
          fmt::print("{:<46} error: {}\n", c.name, r.error);
          ok = false;
          continue;
        }
        const double s = r.gpu_ms * 1e-3;
        fmt::print("{:<46} {:<30} {:>9.2e} {:>10.4f} {:>9.1f} {:>8.3f}  {}{}\n", c.name, r.variant, r.cmp.rel_err,
                   r.gpu_ms, s > 0 ? r.bytes_moved / s * 1e-9 : 0.0, s > 0 ? r.flops / s * 1e-12 : 0.0, r.reason,
                   r.passed ? "" : "  [FAILED parity]");
        ok &= r.passed;
      }
    }
    fmt::print("\nmax err: max|gpu - oracle| / max|oracle| against the float64 reference.\n");
    status = ok ? 0 : 1;
  });
}

}  // namespace vkattn::cli

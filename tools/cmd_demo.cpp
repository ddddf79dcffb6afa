// `vkattn demo`: the main job on the default device. A Llama-3-8B-shaped
// decode step and a 512-token causal prefill: the chosen variant and why, the
// error against the float64 oracle, GPU time and effective bandwidth.
#include <fmt/format.h>

#include "check/text_cases.hpp"
#include "commands.hpp"
#include "vkattn/context.hpp"

namespace vkattn::cli {

namespace {

check::TextCase llama_decode() {
  check::TextCase c;
  c.name = "llama3-8b decode (H32/8 D128 L4096 f16 KV)";
  auto& p = c.params;
  p.batch = 1;
  p.seq_len = 1;
  p.num_heads = 32;
  p.num_kv_heads = 8;
  p.head_dim = 128;
  p.kv_len = {4096};
  p.kv_capacity = 4096;
  p.start_pos = {4095};
  p.causal = true;
  c.q = DType::f32;
  c.kv = DType::f16;
  c.out = DType::f32;
  return c;
}

check::TextCase llama_prefill() {
  check::TextCase c = llama_decode();
  c.name = "llama3-8b prefill (S512 causal f16)";
  c.params.seq_len = 512;
  c.params.kv_len = {512};
  c.params.kv_capacity = 512;
  c.params.start_pos = {0};
  c.q = c.kv = c.out = DType::f16;
  return c;
}

}  // namespace

void add_demo_command(CLI::App& app, GlobalOptions& g, int& status) {
  auto runs = std::make_shared<int>(10);
  auto* cmd = app.add_subcommand("demo", "Run Llama-3-8B-shaped decode and prefill, checked and timed");
  cmd->add_option("--runs", *runs, "Timed replays per case (median reported)")->check(CLI::Range(1, 1000));
  cmd->callback([runs, &g, &status] {
    Context ctx(ContextOptions{g.device});
    fmt::print("device: {} ({}, {})\n\n", ctx.caps().name, ctx.caps().type, ctx.caps().driver_name);
    fmt::print("{:<44} {:<26} {:>10} {:>10} {:>10} {:>9}  {}\n", "case", "variant", "max err", "GPU ms", "GB/s",
               "TFLOP/s", "why");
    bool ok = true;
    for (const auto& c : {llama_decode(), llama_prefill()}) {
      auto r = check::run_text_case(ctx, c, *runs);
      if (!r.error.empty()) {
        fmt::print("{:<44} error: {}\n", r.name, r.error);
        ok = false;
        continue;
      }
      const double s = r.gpu_ms * 1e-3;
      fmt::print("{:<44} {:<26} {:>10.2e} {:>10.4f} {:>10.1f} {:>9.3f}  {}{}\n", r.name, r.variant, r.cmp.rel_err,
                 r.gpu_ms, s > 0 ? r.bytes_moved / s * 1e-9 : 0.0, s > 0 ? r.flops / s * 1e-12 : 0.0, r.reason,
                 r.passed ? "" : "  [FAILED parity]");
      ok &= r.passed;
    }
    fmt::print("\nmax err is max|gpu - oracle| / max|oracle| against the float64 reference.\n");
    status = ok ? 0 : 1;
  });
}

}  // namespace vkattn::cli

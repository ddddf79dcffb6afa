// `vkattn bench [--suite decode|prefill] [--runs N] [--json] [--variant NAME]`:
// GPU-timed medians of model-shaped calls, as time, effective bandwidth and
// TFLOP/s, and as fractions of the device's measured ceilings.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "check/bench_cases.hpp"
#include "commands.hpp"
#include "vkattn/context.hpp"

namespace vkattn::cli {

namespace {

// Ceilings measured through Vulkan on the device (see docs/performance.md).
struct Ceiling {
  const char* device_substring;
  double read_gbps;
  double fp16_tflops;
  const char* how;
};
constexpr Ceiling kCeilings[] = {
    {"H200", 4480.0, 390.0, "compute read bandwidth; NV cooperative-matrix fp16->fp32 peak"},
};

const Ceiling* ceiling_for(const std::string& name) {
  for (const auto& c : kCeilings)
    if (name.find(c.device_substring) != std::string::npos) return &c;
  return nullptr;
}

}  // namespace

void add_bench_command(CLI::App& app, GlobalOptions& g, int& status) {
  struct Opts {
    std::string suite = "all", variant, filter;
    int runs = 50;
    uint32_t splits = 0, tile_keys = 0;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("bench", "Time model-shaped attention against the device's ceilings");
  cmd->add_option("--suite", o->suite, "decode | prefill | all")->check(CLI::IsMember({"decode", "prefill", "all"}));
  cmd->add_option("--runs", o->runs, "Timed replays per case (median)")->check(CLI::Range(1, 10000));
  cmd->add_option("--variant", o->variant, "Force a variant (strict)");
  cmd->add_option("--filter", o->filter, "Only cases whose name contains this text");
  cmd->add_flag("--json", o->json, "One JSON object per case");
  cmd->add_option("--splits", o->splits, "Tuning: KV splits of split variants (0: planner)");
  cmd->add_option("--tile-keys", o->tile_keys, "Tuning: keys per step (0: planner)");
  cmd->callback([o, &g, &status] {
    Context ctx(ContextOptions{g.device});
    const Ceiling* ceil = ceiling_for(ctx.caps().name);
    if (!o->json) {
      fmt::print("device: {}{}\n", ctx.caps().name, ceil ? fmt::format(" (ceilings: {:.0f} GB/s, {:.0f} TFLOP/s)",
                                                                      ceil->read_gbps, ceil->fp16_tflops)
                                                           : "");
      fmt::print("{:<52} {:<28} {:>9} {:>9} {:>6} {:>8} {:>6} {:>9}\n", "case", "variant", "ms", "GB/s", "%bw",
                 "TFLOP/s", "%peak", "err");
    }
    bool ok = true;
    for (auto bc : check::text_bench_cases()) {
      if (o->suite != "all" && bc.suite != o->suite) continue;
      if (!o->filter.empty() && bc.text.name.find(o->filter) == std::string::npos) continue;
      bc.text.variant = o->variant;
      bc.text.splits = o->splits;
      bc.text.tile_keys = o->tile_keys;
      auto r = check::run_text_case(ctx, bc.text, check::RunOptions{o->runs, !bc.oracle});
      const double s = r.gpu_ms * 1e-3;
      const double gbps = s > 0 ? r.bytes_moved / s * 1e-9 : 0.0;
      const double tflops = s > 0 ? r.flops / s * 1e-12 : 0.0;
      ok &= r.passed;
      if (o->json) {
        nlohmann::json j{{"case", bc.text.name}, {"suite", bc.suite},   {"variant", r.variant}, {"ms", r.gpu_ms},
                         {"gbps", gbps},         {"tflops", tflops},    {"rel_err", r.cmp.rel_err},
                         {"passed", r.passed},   {"error", r.error},
                         {"batch", bc.text.params.batch}, {"seq_len", bc.text.params.seq_len},
                         {"heads", bc.text.params.num_heads}, {"kv_heads", bc.text.params.num_kv_heads},
                         {"head_dim", bc.text.params.head_dim}, {"kv_len", bc.text.params.kv_len[0]},
                         {"causal", bc.text.params.causal}, {"q_dtype", to_string(bc.text.q)},
                         {"kv_dtype", to_string(bc.text.kv)}};
        fmt::print("{}\n", j.dump());
        continue;
      }
      if (!r.error.empty()) {
        fmt::print("{:<52} error: {}\n", bc.text.name, r.error);
        continue;
      }
      fmt::print("{:<52} {:<28} {:>9.4f} {:>9.1f} {:>5.1f}% {:>8.2f} {:>5.1f}% {:>9}\n", bc.text.name, r.variant,
                 r.gpu_ms, gbps, ceil ? 100 * gbps / ceil->read_gbps : 0.0, tflops,
                 ceil ? 100 * tflops / ceil->fp16_tflops : 0.0,
                 bc.oracle ? fmt::format("{:.1e}", r.cmp.rel_err) : "-");
    }
    status = ok ? 0 : 1;
  });
}

}  // namespace vkattn::cli

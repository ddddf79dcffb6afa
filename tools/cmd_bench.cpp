// `vkattn bench --suite NAME|FILE` or `vkattn bench --heads H --head-dim D ...`:
// GPU-timed cases (median, min and max of --runs replays after a warm-up), as
// time, effective bandwidth and TFLOP/s, and as shares of the device's
// ceilings; parity with the oracle on a sample; probes that measure the
// ceilings. Formats: table, --json (JSON lines and a summary), --csv.
#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "bench_report.hpp"
#include "check/bench_run.hpp"
#include "check/bench_suite.hpp"
#include "commands.hpp"
#include "vkattn/context.hpp"
#include "vkattn/error.hpp"

namespace vkattn::cli {

namespace {

// Ceilings measured through Vulkan on known devices (DESIGN.md §6), used
// until a probe of this run or --ceilings gives measured ones.
struct KnownCeiling {
  const char* device_substring;
  double read_gbps;
  double fp16_tflops;
};
constexpr KnownCeiling kKnownCeilings[] = {
    {"H200", 4480.0, 390.0},  // compute read bandwidth; NV cooperative-matrix fp16->fp32 peak
};

Ceilings table_ceilings(const std::string& device) {
  for (const auto& c : kKnownCeilings)
    if (device.find(c.device_substring) != std::string::npos) return {c.read_gbps, c.fp16_tflops, "table"};
  return {};
}

// Takes the measured ceilings from a probe row (this run's, or a --ceilings file's).
void take_probe(Ceilings& c, const OrderedJson& row, const std::string& source) {
  if (row.value("family", "") != "probe" || row.value("status", "") != "ok") return;
  if (row.value("probe", "") == "read_bandwidth") c.read_gbps = row.value("gbps", 0.0);
  if (row.value("probe", "") == "coopmat_fp16") c.fp16_tflops = row.value("tflops", 0.0);
  c.source = source;
}

Ceilings load_ceilings(const std::string& path, Ceilings c) {
  std::ifstream in(path);
  if (!in) throw Error(ErrorKind::io, fmt::format("--ceilings: cannot read {}", path));
  std::string line;
  bool found = false;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] != '{') continue;
    OrderedJson row;
    try {
      row = OrderedJson::parse(line);
    } catch (const std::exception& e) {
      throw Error(ErrorKind::invalid_argument, fmt::format("--ceilings {}: a line is not JSON: {}", path, e.what()));
    }
    const bool probe = row.value("family", "") == "probe" && row.value("status", "") == "ok";
    take_probe(c, row, fmt::format("measured ({})", path));
    found |= probe;
  }
  if (!found)
    throw Error(ErrorKind::invalid_argument,
                fmt::format("--ceilings {}: expected probe rows with status ok (vkattn bench --suite ceilings --json), "
                            "found none",
                            path));
  return c;
}

// Shape options of a command-line case, named as the suite fields they set.
struct ShapeFlags {
  uint32_t batch = 1, seq_len = 1, heads = 0, kv_heads = 0, head_dim = 0, kv_len = 0, page_size = 16, window = 0;
  uint32_t hot_window = 256;
  std::string layout = "contiguous", cold_layout = "paged", q_dtype = "f16", kv_dtype = "f16", out_dtype;
  bool causal = true;
  double softcap = 0.0, scale = 0.0;
};

// The command line's case as a one-case suite, so it is checked and named
// exactly as a suite file's case.
check::BenchSuite command_line_suite(const CLI::App* cmd, const ShapeFlags& s) {
  nlohmann::ordered_json c{{"family", "text"}};
  auto set = [&](const char* flag, const char* field, const auto& value) {
    if (cmd->count(flag)) c[field] = value;
  };
  set("--batch", "batch", s.batch);
  set("--seq-len", "seq_len", s.seq_len);
  set("--heads", "heads", s.heads);
  set("--kv-heads", "kv_heads", s.kv_heads);
  set("--head-dim", "head_dim", s.head_dim);
  set("--kv-len", "kv_len", s.kv_len);
  set("--layout", "layout", s.layout);
  set("--page-size", "page_size", s.page_size);
  set("--hot-window", "hot_window", s.hot_window);
  set("--cold-layout", "cold_layout", s.cold_layout);
  set("--window", "window", s.window);
  set("--q-dtype", "q_dtype", s.q_dtype);
  set("--kv-dtype", "kv_dtype", s.kv_dtype);
  set("--out-dtype", "out_dtype", s.out_dtype);
  set("--softcap", "softcap", s.softcap);
  set("--scale", "scale", s.scale);
  if (cmd->count("--causal") || cmd->count("--no-causal")) c["causal"] = s.causal;
  const nlohmann::ordered_json suite{{"suite", "command-line"}, {"cases", {c}}};
  return check::parse_bench_suite(suite.dump(), "command line");
}

constexpr const char* kShapeFlags[] = {"--batch",   "--seq-len", "--heads",     "--kv-heads", "--head-dim",
                                       "--kv-len",  "--layout",  "--page-size", "--window",   "--q-dtype",
                                       "--kv-dtype", "--out-dtype", "--softcap", "--scale",   "--causal",
                                       "--no-causal", "--hot-window", "--cold-layout"};

}  // namespace

void add_bench_command(CLI::App& app, GlobalOptions& g, int& status) {
  struct Opts {
    std::string suite, filter, ceilings_file, caps_file;
    check::BenchRunOptions run;
    bool json = false, csv = false;
    ShapeFlags shape;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("bench", "Time attention cases against the device's ceilings");
  cmd->add_option("--suite", o->suite,
                  "A suite name (bench/suites/NAME.json; $VKATTN_BENCH_SUITES) or a suite file (default: models)");
  cmd->add_option("--filter", o->filter, "Only cases whose name contains this text");
  cmd->add_option("--runs", o->run.runs, "Timed replays per case (median, min, max)")->check(CLI::Range(1, 100000));
  cmd->add_option("--max-run-ms", o->run.max_run_ms, "Do not time a case whose first run takes longer")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--ceilings", o->ceilings_file, "Measured ceilings: the --json output of `bench --suite ceilings`");
  auto* dry = cmd->add_flag("--dry-run", o->run.dry_run, "List the cases and why any would be skipped; run nothing");
  cmd->add_option("--caps", o->caps_file, "With --dry-run: decide for the device of this caps file")->needs(dry);
  auto* json = cmd->add_flag("--json", o->json, "JSON lines: one object per case, then a summary object");
  auto* csv = cmd->add_flag("--csv", o->csv, "CSV: a header, then one line per case")->excludes(json);
  // A list per case has no CSV column, and a dry run creates no pipeline.
  cmd->add_flag("--pipeline-stats", o->run.pipeline_stats,
                "Each case's pipelines (module, specialization) with the driver's statistics: registers, shared "
                "memory, spills (VK_KHR_pipeline_executable_properties); table or --json")
      ->excludes(dry)
      ->excludes(csv);
  cmd->add_option("--variant", o->run.variant, "Text cases (vision cases: a vision variant): force it (strict)");
  cmd->add_option("--splits", o->run.splits, "Text cases: KV splits of split variants (0: planner)");
  cmd->add_option("--tile-keys", o->run.tile_keys, "Text cases: keys per step (0: planner)");
  cmd->add_option("--rows", o->run.rows, "Text cases: query rows (positions x heads) per workgroup (0: planner)");
  auto& s = o->shape;
  cmd->add_option("--batch", s.batch, "Command-line case: sequences");
  cmd->add_option("--seq-len", s.seq_len, "Command-line case: query rows per sequence (1: decode)");
  cmd->add_option("--heads", s.heads, "Command-line case: query heads");
  cmd->add_option("--kv-heads", s.kv_heads, "Command-line case: KV heads (default: --heads)");
  cmd->add_option("--head-dim", s.head_dim, "Command-line case: head dimension");
  cmd->add_option("--kv-len", s.kv_len, "Command-line case: keys per sequence (default: --seq-len)");
  cmd->add_option("--layout", s.layout, "Command-line case: contiguous | ring | paged | tiered");
  cmd->add_option("--hot-window", s.hot_window, "Command-line case, tiered: f16 hot ring slots (default 256)");
  cmd->add_option("--cold-layout", s.cold_layout, "Command-line case, tiered: contiguous | paged cold tier (default paged)");
  cmd->add_option("--page-size", s.page_size, "Command-line case: keys per page (paged)");
  cmd->add_option("--window", s.window, "Command-line case: sliding window (0: none)");
  cmd->add_option("--q-dtype", s.q_dtype, "Command-line case: f32 | f16 | bf16 (default f16)");
  cmd->add_option("--kv-dtype", s.kv_dtype,
                  "Command-line case: f32 | f16 | bf16 | i8 | i4 (i8/i4 filled by kv_append; default: --q-dtype)");
  cmd->add_option("--out-dtype", s.out_dtype, "Command-line case: f32 | f16 | bf16 (default: --q-dtype)");
  cmd->add_flag("--causal,!--no-causal", s.causal, "Command-line case: causal mask (default on)");
  cmd->add_option("--softcap", s.softcap, "Command-line case: logit softcap (0: none)");
  cmd->add_option("--scale", s.scale, "Command-line case: score scale (default 1/sqrt(D))");
  cmd->callback([o, cmd, &g, &status] {
    bool shape_given = false;
    for (const char* f : kShapeFlags) shape_given |= cmd->count(f) > 0;
    if (shape_given && !o->suite.empty())
      throw Error(ErrorKind::invalid_argument, "bench: expected --suite or a command-line shape (--heads ...), got both");
    const check::BenchSuite suite =
        shape_given ? command_line_suite(cmd, o->shape) : check::find_bench_suite(o->suite.empty() ? "models" : o->suite);
    std::vector<const check::BenchSpec*> cases;
    for (const auto& c : suite.cases)
      if (o->filter.empty() || c.name.find(o->filter) != std::string::npos) cases.push_back(&c);
    if (cases.empty())
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("--filter: no case of suite {} contains \"{}\"", suite.name, o->filter));

    // A dry run against a caps file needs no device.
    std::unique_ptr<Context> ctx;
    if (o->caps_file.empty()) {
      ContextOptions options{g.device};
      if (o->run.pipeline_stats) options.pipeline_statistics = 1;
      ctx = std::make_unique<Context>(options);
    }
    const DeviceCaps caps = ctx ? ctx->caps() : load_caps_file(o->caps_file);
    if (o->run.pipeline_stats && !caps.pipeline_executable_info)
      std::fprintf(stderr,
                   "--pipeline-stats: the driver of '%s' does not offer VK_KHR_pipeline_executable_properties "
                   "(pipelineExecutableInfo); pipelines are listed without statistics\n",
                   caps.name.c_str());
    Ceilings ceilings = table_ceilings(caps.name);
    if (!o->ceilings_file.empty()) ceilings = load_ceilings(o->ceilings_file, ceilings);
    BenchPrinter out(o->json ? BenchFormat::json : o->csv ? BenchFormat::csv : BenchFormat::table);
    out.header(caps, suite, cases.size());
    bool ok = true;
    for (size_t i = 0; i < cases.size(); ++i) {
      std::fprintf(stderr, "[%zu/%zu] case %s\n", i + 1, cases.size(), cases[i]->name.c_str());
      std::fflush(stderr);
      const check::BenchRecord r = ctx ? check::run_bench_case(*ctx, *cases[i], o->run) : check::dry_run_case(caps, *cases[i]);
      const OrderedJson row = bench_row(suite.name, *cases[i], r, ceilings);
      out.row(row);
      take_probe(ceilings, row, "measured");
      ok &= r.status == check::BenchStatus::ok || r.status == check::BenchStatus::skipped;
    }
    out.summary(caps, suite.name, ceilings);
    status = ok ? 0 : 1;
  });
}

}  // namespace vkattn::cli

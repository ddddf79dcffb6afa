#include "bench_report.hpp"

#include <fmt/format.h>

#include <cmath>
#include <variant>

namespace vkattn::cli {

namespace {

// CSV columns, in order: the row fields a spreadsheet needs; absent ones are empty.
constexpr const char* kCsvColumns[] = {
    "suite",    "case",    "family",   "status",   "variant",    "ms",       "min_ms",     "max_ms",
    "runs",     "gbps",    "tflops",   "bw_share", "peak_share", "parity",   "rel_err",    "checked_rows",
    "total_rows", "batch", "seq_len",  "heads",    "kv_heads",   "head_dim", "kv_len",     "layout",
    "page_size", "window", "causal",   "q_dtype",  "kv_dtype",   "out_dtype", "patches",   "frames",
    "dtype",    "basis_dtype", "rotary_dim", "vocab", "reason"};

std::string csv_cell(const OrderedJson& v) {
  if (v.is_null()) return "";
  std::string s = v.is_string() ? v.get<std::string>() : v.dump();
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// The fields text and BDPA cases share.
void add_decoder_shape(OrderedJson& j, uint32_t batch, uint32_t seq_len, uint32_t heads, uint32_t kv_heads,
                       uint32_t head_dim, uint32_t kv_len) {
  j["batch"] = batch;
  j["seq_len"] = seq_len;
  j["heads"] = heads;
  j["kv_heads"] = kv_heads;
  j["head_dim"] = head_dim;
  j["kv_len"] = kv_len;
}

void add_shape(OrderedJson& j, const check::BenchSpec& spec) {
  switch (spec.family) {
    case check::BenchFamily::text: {
      const auto& c = spec.text;
      const auto& p = c.params;
      add_decoder_shape(j, p.batch, p.seq_len, p.num_heads, p.num_kv_heads, p.head_dim, p.kv_len[0]);
      j["layout"] = to_string(p.layout);
      if (p.layout == KvLayout::tiered) {
        j["cold_layout"] = to_string(p.cold_layout);
        j["hot_window"] = p.hot_window;
      }
      if (p.slot_layout() == KvLayout::paged) j["page_size"] = p.kv_capacity;
      j["window"] = p.window;
      j["causal"] = p.causal;
      j["softcap"] = p.softcap;
      if (p.scale) j["scale"] = *p.scale;
      j["q_dtype"] = to_string(c.q);
      j["kv_dtype"] = to_string(c.kv);
      j["out_dtype"] = to_string(c.out);
      break;
    }
    case check::BenchFamily::vision: {
      const auto& p = spec.vision.params;
      j["patches"] = p.patches;
      j["heads"] = p.num_heads;
      j["head_dim"] = p.head_dim;
      j["layout"] = to_string(p.layout);
      j["scale"] = p.effective_scale();
      j["dtype"] = to_string(spec.vision.dtype);
      break;
    }
    case check::BenchFamily::audio: {
      const auto& p = spec.audio.params;
      j["frames"] = p.frames;
      j["heads"] = p.num_heads;
      j["head_dim"] = p.head_dim;
      j["chunk"] = p.chunk;
      j["max_past"] = p.max_past;
      j["max_future"] = p.max_future;
      j["dtype"] = to_string(spec.audio.dtype);
      break;
    }
    case check::BenchFamily::bdpa: {
      const auto& c = spec.bdpa;
      const auto& p = c.params;
      add_decoder_shape(j, p.batch, p.seq_len, p.num_heads, p.num_kv_heads, p.head_dim, p.kv_capacity);
      j["window"] = p.window;
      j["causal"] = p.causal;
      j["rotary_dim"] = p.rotary_dim;
      j["vocab"] = c.vocab;
      j["q_dtype"] = to_string(c.q);
      j["basis_dtype"] = to_string(c.basis);
      j["out_dtype"] = to_string(c.out);
      break;
    }
    case check::BenchFamily::probe:
      j["probe"] = std::string(check::to_string(spec.probe.kind));
      break;
  }
}

// The pipelines a case's timed call bound, with the driver's statistics.
OrderedJson pipelines_json(const std::vector<check::BoundPipeline>& pipelines) {
  OrderedJson out = OrderedJson::array();
  for (const auto& p : pipelines) {
    OrderedJson stats = OrderedJson::array();
    for (const auto& s : p.statistics) {
      OrderedJson v;
      std::visit([&](auto x) { v = x; }, s.value);
      stats.push_back({{"executable", s.executable}, {"name", s.name}, {"value", v}, {"description", s.description}});
    }
    OrderedJson row{{"module", p.key.module}, {"spec", p.key.spec}};
    if (p.key.required_subgroup_size) row["subgroup_size"] = p.key.required_subgroup_size;
    row["statistics"] = stats;
    out.push_back(row);
  }
  return out;
}

// Table format: one line per pipeline, then one per executable with its statistics.
void print_pipelines(const OrderedJson& pipelines) {
  for (const auto& p : pipelines) {
    fmt::print("  pipeline {} spec [{}]{}\n", p["module"].get<std::string>(),
               fmt::join(p["spec"].get<std::vector<uint32_t>>(), ","),
               p.contains("subgroup_size") ? fmt::format(" subgroup {}", p["subgroup_size"].get<uint32_t>()) : "");
    std::string executable;
    std::vector<std::string> line;
    auto flush = [&] {
      if (!line.empty()) fmt::print("    {}: {}\n", executable, fmt::join(line, ", "));
      line.clear();
    };
    for (const auto& s : p["statistics"]) {
      if (s["executable"] != executable) flush();
      executable = s["executable"];
      const auto& v = s["value"];
      line.push_back(fmt::format("{} {}", s["name"].get<std::string>(), v.is_string() ? v.get<std::string>() : v.dump()));
    }
    flush();
  }
}

}  // namespace

OrderedJson bench_row(const std::string& suite, const check::BenchSpec& spec, const check::BenchRecord& r,
                      const Ceilings& ceilings) {
  OrderedJson j;
  j["suite"] = suite;
  j["case"] = spec.name;
  j["family"] = to_string(spec.family);
  j["status"] = to_string(r.status);
  if (!r.reason.empty()) j["reason"] = r.reason;
  if (!r.variant.empty()) j["variant"] = r.variant;
  if (r.timing.runs > 0) {
    const double s = r.timing.median_ms * 1e-3;
    const double gbps = s > 0 ? r.bytes / s * 1e-9 : 0.0, tflops = s > 0 ? r.flops / s * 1e-12 : 0.0;
    j["ms"] = r.timing.median_ms;
    j["min_ms"] = r.timing.min_ms;
    j["max_ms"] = r.timing.max_ms;
    j["runs"] = r.timing.runs;
    if (r.timing.warmup_ms > 0) j["warmup_ms"] = r.timing.warmup_ms;
    j["gbps"] = gbps;
    j["tflops"] = tflops;
    if (ceilings.read_gbps > 0) j["bw_share"] = gbps / ceilings.read_gbps;
    if (ceilings.fp16_tflops > 0) j["peak_share"] = tflops / ceilings.fp16_tflops;
    j["ceilings"] = ceilings.source;
    if (r.input_sets > 0) j["input_sets"] = r.input_sets;
  }
  j["bytes"] = r.bytes;
  j["flops"] = r.flops;
  if (r.status != check::BenchStatus::skipped && r.status != check::BenchStatus::error) {
    if (spec.family == check::BenchFamily::probe) {
      j["parity"] = r.parity_passed ? "pass" : "fail";
      j["check"] = r.detail;
    } else if (r.checked_rows > 0) {
      j["parity"] = r.parity_passed ? "pass" : "fail";
      j["rel_err"] = r.rel_err;
      j["tolerance"] = r.tolerance;
      j["checked_rows"] = r.checked_rows;
      j["total_rows"] = r.total_rows;
    } else {
      j["parity"] = "unchecked";
    }
  }
  add_shape(j, spec);
  if (!r.pipelines.empty()) j["pipelines"] = pipelines_json(r.pipelines);
  return j;
}

void BenchPrinter::header(const DeviceCaps& caps, const check::BenchSuite& suite, size_t cases) {
  if (format_ == BenchFormat::json) return;
  if (format_ == BenchFormat::csv) {
    fmt::print("{}\n", fmt::join(kCsvColumns, ","));
    return;
  }
  fmt::print("device: {} ({} {}), suite {}: {} cases ({})\n", caps.name, caps.driver_name, caps.driver_info, suite.name,
             cases, suite.source);
  if (!suite.description.empty()) fmt::print("{}\n", suite.description);
  fmt::print("{:<60} {:<28} {:>9} {:>9} {:>9} {:>9} {:>6} {:>8} {:>6} {:>9}\n", "case", "variant", "ms", "min",
             "max", "GB/s", "%bw", "TFLOP/s", "%peak", "parity");
  std::fflush(stdout);
}

void BenchPrinter::row(const OrderedJson& j) {
  const std::string status = j["status"];
  ok_ += status == "ok";
  skipped_ += status == "skipped";
  failed_ += status == "failed";
  errors_ += status == "error";
  if (format_ == BenchFormat::json) {
    fmt::print("{}\n", j.dump());
  } else if (format_ == BenchFormat::csv) {
    std::vector<std::string> cells;
    for (const char* c : kCsvColumns) cells.push_back(csv_cell(j.value(c, OrderedJson())));
    fmt::print("{}\n", fmt::join(cells, ","));
  } else if (!j.contains("ms")) {
    fmt::print("{:<60} {}{}\n", j["case"].get<std::string>(), status,
               j.contains("reason") ? ": " + j["reason"].get<std::string>() : "");
  } else {
    auto share = [&](const char* key) {
      return j.contains(key) ? fmt::format("{:.1f}%", 100 * j[key].get<double>()) : std::string("-");
    };
    std::string parity = j.value("parity", "-");
    if (j.contains("rel_err")) parity = fmt::format("{:.1e}", j["rel_err"].get<double>());
    if (status == "failed") parity += " FAIL";
    fmt::print("{:<60} {:<28} {:>9.4f} {:>9.4f} {:>9.4f} {:>9.1f} {:>6} {:>8.2f} {:>6} {:>9}\n",
               j["case"].get<std::string>(), j.value("variant", "-"), j["ms"].get<double>(),
               j["min_ms"].get<double>(), j["max_ms"].get<double>(), j["gbps"].get<double>(), share("bw_share"),
               j["tflops"].get<double>(), share("peak_share"), parity);
    if (status == "failed") fmt::print("  {}\n", j["reason"].get<std::string>());
  }
  if (format_ == BenchFormat::table && j.contains("pipelines")) print_pipelines(j["pipelines"]);
  std::fflush(stdout);
}

void BenchPrinter::summary(const DeviceCaps& caps, const std::string& suite, const Ceilings& ceilings) {
  if (format_ == BenchFormat::csv) return;
  if (format_ == BenchFormat::json) {
    OrderedJson s;
    s["summary"] = true;
    s["suite"] = suite;
    s["device"] = caps.name;
    s["driver"] = fmt::format("{} {}", caps.driver_name, caps.driver_info);
    s["ceilings"] = {{"read_gbps", ceilings.read_gbps}, {"fp16_tflops", ceilings.fp16_tflops},
                     {"source", ceilings.source}};
    s["ok"] = ok_;
    s["skipped"] = skipped_;
    s["failed"] = failed_;
    s["errors"] = errors_;
    fmt::print("{}\n", s.dump());
    return;
  }
  fmt::print("ceilings ({}): {:.0f} GB/s read, {:.1f} TFLOP/s fp16\n", ceilings.source, ceilings.read_gbps,
             ceilings.fp16_tflops);
  fmt::print("{} ok, {} skipped, {} failed, {} errors\n", ok_, skipped_, failed_, errors_);
}

}  // namespace vkattn::cli

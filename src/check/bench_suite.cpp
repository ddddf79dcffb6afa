#include "check/bench_suite.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cfloat>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ops/dtype_code.hpp"
#include "vkattn/error.hpp"

namespace vkattn::check {

namespace {

using Json = nlohmann::ordered_json;
namespace fs = std::filesystem;

enum Families : uint8_t {
  kText = 1 << 0,
  kVision = 1 << 1,
  kAudio = 1 << 2,
  kProbe = 1 << 3,
  kBdpa = 1 << 4,
  kAll = kText | kVision | kAudio | kProbe | kBdpa,
};

enum class Kind { positive, non_negative, boolean, number, text };

// Every field a case may set: its type and the families it applies to.
struct Field {
  const char* name;
  Kind kind;
  uint8_t families;
};
constexpr Field kFields[] = {
    {"family", Kind::text, kAll},          {"name", Kind::text, kAll},
    {"label", Kind::text, kAll},           {"batch", Kind::positive, kText | kBdpa},
    {"seq_len", Kind::positive, kText | kBdpa},
    {"heads", Kind::positive, kText | kVision | kAudio | kBdpa},
    {"kv_heads", Kind::positive, kText | kBdpa},
    {"head_dim", Kind::positive, kText | kVision | kAudio | kBdpa},
    {"kv_len", Kind::positive, kText | kBdpa},
    {"layout", Kind::text, kText | kVision},
    {"page_size", Kind::positive, kText},  {"window", Kind::non_negative, kText | kBdpa},
    {"causal", Kind::boolean, kText | kBdpa},
    {"softcap", Kind::number, kText},
    {"scale", Kind::number, kText | kVision},
    {"q_dtype", Kind::text, kText | kBdpa},
    {"kv_dtype", Kind::text, kText},
    {"out_dtype", Kind::text, kText | kBdpa},
    {"dtype", Kind::text, kVision | kAudio},
    {"patches", Kind::positive, kVision},  {"frames", Kind::positive, kAudio},
    {"chunk", Kind::positive, kAudio},     {"max_past", Kind::positive, kAudio},
    {"max_future", Kind::non_negative, kAudio},
    {"logit_cap", Kind::number, kAudio},   {"probe", Kind::text, kProbe},
    {"bytes", Kind::positive, kProbe},     {"workgroups", Kind::non_negative, kProbe},
    {"iterations", Kind::positive, kProbe},
    {"recorded_at", Kind::positive, kText},
    {"hot_window", Kind::positive, kText}, {"cold_layout", Kind::text, kText},
    {"basis_dtype", Kind::text, kBdpa},    {"rotary_dim", Kind::non_negative, kBdpa},
    {"vocab", Kind::positive, kBdpa},
};

struct FamilyName {
  const char* name;
  BenchFamily family;
  uint8_t bit;
};
constexpr FamilyName kBenchFamilies[] = {{"text", BenchFamily::text, kText},
                                    {"vision", BenchFamily::vision, kVision},
                                    {"audio", BenchFamily::audio, kAudio},
                                    {"bdpa", BenchFamily::bdpa, kBdpa},
                                    {"probe", BenchFamily::probe, kProbe}};

struct ProbeName {
  const char* name;
  ProbeKind kind;
};
constexpr ProbeName kProbes[] = {{"read_bandwidth", ProbeKind::read_bandwidth},
                                 {"coopmat_fp16", ProbeKind::coopmat_fp16},
                                 {"dispatch_floor", ProbeKind::dispatch_floor}};

// "a, b or c" of the names in a table of {name, ...} entries, for errors.
template <typename Table>
std::string expected_one_of(const Table& table) {
  std::string out;
  const size_t n = std::size(table);
  for (size_t i = 0; i < n; ++i) out += (i == 0 ? "" : i + 1 == n ? " or " : ", ") + std::string(table[i].name);
  return out;
}

const char* describe(Kind k) {
  switch (k) {
    case Kind::positive: return "a positive integer";
    case Kind::non_negative: return "a non-negative integer";
    case Kind::boolean: return "true or false";
    case Kind::number: return "a non-negative number in float range";
    case Kind::text: return "a string";
  }
  return "";
}

// Errors name the suite's file and the field's place in it.
class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw Error(ErrorKind::invalid_argument, fmt::format("suite {}: {}: {}", source_, where, what));
  }

  const Field& field(const std::string& key, const std::string& where) const {
    for (const auto& f : kFields)
      if (key == f.name) return f;
    std::vector<std::string> names;
    for (const auto& f : kFields) names.push_back(f.name);
    fail(where, fmt::format("unknown field \"{}\" (expected one of {})", key, fmt::join(names, ", ")));
  }

  // Checks every field of an object of case fields.
  void check_fields(const Json& obj, const std::string& where) const {
    if (!obj.is_object()) fail(where, fmt::format("expected an object of case fields, got {}", obj.dump()));
    for (const auto& [key, value] : obj.items()) check_value(field(key, where + "." + key), value, where + "." + key);
  }

  void check_value(const Field& f, const Json& v, const std::string& where) const {
    bool ok = false;
    switch (f.kind) {
      case Kind::positive: ok = v.is_number_unsigned() && v.get<uint64_t>() > 0; break;
      case Kind::non_negative: ok = v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0); break;
      case Kind::boolean: ok = v.is_boolean(); break;
      // Numbers become floats: one past float's range would be an undefined conversion.
      case Kind::number: ok = v.is_number() && v.get<double>() >= 0 && v.get<double>() <= FLT_MAX; break;
      case Kind::text: ok = v.is_string(); break;
    }
    if (f.kind == Kind::positive || f.kind == Kind::non_negative)
      ok = ok && v.get<uint64_t>() <= (std::string_view(f.name) == "bytes" ? UINT64_MAX : UINT32_MAX);
    if (!ok) fail(where, fmt::format("expected {}, got {}", describe(f.kind), v.dump()));
  }

  const std::string& source() const { return source_; }

 private:
  std::string source_;
};

// One expanded case before conversion: its fields, and the keys set on the
// case itself (grid fields, axes, case objects), which must apply to its
// family; suite defaults that do not apply are ignored.
struct RawCase {
  Json fields = Json::object();
  std::vector<std::string> own;
  std::string where;
};

void merge(RawCase& c, const Json& obj, bool own) {
  for (const auto& [key, value] : obj.items()) {
    c.fields[key] = value;
    if (own && std::find(c.own.begin(), c.own.end(), key) == c.own.end()) c.own.push_back(key);
  }
}

class CaseBuilder {
 public:
  CaseBuilder(const Reader& reader, const RawCase& raw) : r_(reader), raw_(raw) {}

  BenchSpec build() {
    BenchSpec s;
    const std::string family = text("family", "text");
    const FamilyName* fam = nullptr;
    for (const auto& f : kBenchFamilies)
      if (family == f.name) fam = &f;
    if (!fam) r_.fail(raw_.where + ".family", fmt::format("expected {}, got \"{}\"", expected_one_of(kBenchFamilies), family));
    s.family = fam->family;
    for (const auto& key : raw_.own) {
      if (!(r_.field(key, raw_.where).families & fam->bit))
        r_.fail(raw_.where + "." + key, fmt::format("does not apply to family {}", family));
    }
    std::string name;
    switch (s.family) {
      case BenchFamily::text: name = build_text(s.text); break;
      case BenchFamily::vision: name = build_vision(s.vision); break;
      case BenchFamily::audio: name = build_audio(s.audio); break;
      case BenchFamily::bdpa: name = build_bdpa(s.bdpa); break;
      case BenchFamily::probe: name = build_probe(s.probe); break;
    }
    const std::string label = text("label", "");
    s.name = has("name") ? text("name", "") : label.empty() ? name : label + " " + name;
    s.text.name = s.vision.name = s.audio.name = s.bdpa.name = s.name;
    return s;
  }

 private:
  bool has(const char* key) const { return raw_.fields.contains(key); }
  bool flag(const char* key, bool fallback) const { return has(key) ? raw_.fields[key].get<bool>() : fallback; }
  uint64_t count(const char* key, uint64_t fallback) const {
    return has(key) ? raw_.fields[key].get<uint64_t>() : fallback;
  }
  uint32_t u32(const char* key, uint32_t fallback) const { return static_cast<uint32_t>(count(key, fallback)); }
  uint32_t required(const char* key) const {
    if (!has(key)) r_.fail(raw_.where, fmt::format("missing field \"{}\"", key));
    return u32(key, 0);
  }
  // kv_len of a decoder case whose queries are the last seq_len of its keys.
  uint32_t keys_for(uint32_t seq_len) const {
    const uint32_t kv_len = u32("kv_len", seq_len);
    if (kv_len < seq_len)
      r_.fail(raw_.where + ".kv_len", fmt::format("expected at least seq_len ({}), got {}", seq_len, kv_len));
    return kv_len;
  }
  std::string text(const char* key, const std::string& fallback) const {
    return has(key) ? raw_.fields[key].get<std::string>() : fallback;
  }
  double number(const char* key, double fallback) const { return has(key) ? raw_.fields[key].get<double>() : fallback; }
  DType dtype(const char* key, const std::string& fallback, bool quantized_too = false) const {
    const std::string v = text(key, fallback);
    for (DType t : {DType::f32, DType::f16, DType::bf16, DType::i8, DType::i4})
      if (v == to_string(t) && (quantized_too || (t != DType::i8 && t != DType::i4))) return t;
    r_.fail(raw_.where + "." + key,
            fmt::format("expected f32, f16{}, got \"{}\"", quantized_too ? ", bf16, i8 or i4" : " or bf16", v));
  }

  std::string build_text(TextCase& c) {
    const uint32_t seq_len = u32("seq_len", 1);
    const uint32_t heads = required("heads");
    const uint32_t kv_len = keys_for(seq_len);
    const std::string layout_name = text("layout", "contiguous");
    KvLayout layout;
    if (layout_name == "contiguous") layout = KvLayout::contiguous;
    else if (layout_name == "ring") layout = KvLayout::ring;
    else if (layout_name == "paged") layout = KvLayout::paged;
    else if (layout_name == "tiered") layout = KvLayout::tiered;
    else
      r_.fail(raw_.where + ".layout",
              fmt::format("expected contiguous, ring, paged or tiered, got \"{}\"", layout_name));
    // Tiered: the hot ring's slots and the cold tier's layout (whose page size page_size is).
    const bool tiered = layout == KvLayout::tiered;
    for (const char* key : {"hot_window", "cold_layout"})
      if (has(key) && !tiered)
        r_.fail(raw_.where + "." + key, fmt::format("applies to the tiered layout only, the layout is {}", layout_name));
    const std::string cold_name = text("cold_layout", "paged");
    if (cold_name != "contiguous" && cold_name != "paged")
      r_.fail(raw_.where + ".cold_layout", fmt::format("expected contiguous or paged, got \"{}\"", cold_name));
    const KvLayout cold = cold_name == "paged" ? KvLayout::paged : KvLayout::contiguous;
    const KvLayout slots = tiered ? cold : layout;
    if (has("page_size") && slots != KvLayout::paged)
      r_.fail(raw_.where + ".page_size", fmt::format("applies to the paged layout only (or a paged cold tier), the "
                                                     "layout is {}{}",
                                                     layout_name, tiered ? " with a contiguous cold tier" : ""));
    c = make_text_bench_case(u32("batch", 1), seq_len, heads, u32("kv_heads", heads), required("head_dim"), kv_len,
                             slots, u32("page_size", 16));
    if (tiered) {
      c.params.layout = KvLayout::tiered;
      c.params.cold_layout = cold;
      c.params.hot_window = u32("hot_window", 256);
    }
    c.params.causal = flag("causal", true);
    c.params.window = u32("window", 0);
    c.params.softcap = static_cast<float>(number("softcap", 0.0));
    if (has("scale")) c.params.scale = static_cast<float>(number("scale", 0.0));
    c.q = dtype("q_dtype", "f16");
    c.kv = dtype("kv_dtype", std::string(to_string(c.q)), true);
    const bool quantized = is_quantized(c.kv);
    if (quantized && c.q == DType::bf16)
      r_.fail(raw_.where + ".q_dtype", fmt::format("expected f32 or f16 with kv_dtype {}, got bf16", to_string(c.kv)));
    if (tiered && c.kv == DType::f32)
      r_.fail(raw_.where + ".kv_dtype", "expected f16, bf16, i8 or i4 for the tiered layout's cold tier, got f32");
    c.out = dtype("out_dtype", std::string(to_string(c.q)));
    c.recorded_at = u32("recorded_at", 0);
    if (c.recorded_at && (c.recorded_at < seq_len || c.recorded_at > kv_len))
      r_.fail(raw_.where + ".recorded_at",
              fmt::format("expected a length from seq_len ({}) to kv_len ({}), got {}", seq_len, kv_len, c.recorded_at));
    return text_bench_name(c);
  }

  std::string build_vision(VisionCase& c) {
    c.params.patches = required("patches");
    c.params.num_heads = required("heads");
    c.params.head_dim = required("head_dim");
    const std::string layout = text("layout", "phd");
    if (layout != "phd" && layout != "hpd")
      r_.fail(raw_.where + ".layout", fmt::format("expected phd or hpd, got \"{}\"", layout));
    c.params.layout = vision_layout_from_string(layout);
    if (has("scale")) c.params.scale = static_cast<float>(number("scale", 0.0));
    c.dtype = c.out = dtype("dtype", "f16");
    return fmt::format("vision P{} H{} D{} {} {}", c.params.patches, c.params.num_heads, c.params.head_dim, layout,
                       to_string(c.dtype));
  }

  std::string build_audio(AudioCase& c) {
    auto& p = c.params;
    p.frames = required("frames");
    p.num_heads = required("heads");
    p.head_dim = required("head_dim");
    p.chunk = u32("chunk", p.chunk);
    p.max_past = u32("max_past", p.max_past);
    p.max_future = u32("max_future", p.max_future);
    p.logit_cap = static_cast<float>(number("logit_cap", p.logit_cap));
    c.dtype = c.out = dtype("dtype", "f16");
    return fmt::format("audio T{} H{} D{} W{} P{} F{} {}", p.frames, p.num_heads, p.head_dim, p.chunk, p.max_past,
                       p.max_future, to_string(c.dtype));
  }

  // A BDPA cache of kv_len keys per sequence built from a contiguous one
  // whose token ids repeat (vocab distinct ids), queries at its end.
  std::string build_bdpa(BdpaCase& c) {
    auto& p = c.params;
    p.batch = u32("batch", 1);
    p.seq_len = u32("seq_len", 1);
    p.num_heads = required("heads");
    p.num_kv_heads = u32("kv_heads", p.num_heads);
    p.head_dim = required("head_dim");
    const uint32_t kv_len = keys_for(p.seq_len);
    p.kv_capacity = kv_len;
    p.kv_len = {kv_len};
    p.start_pos = {kv_len - p.seq_len};
    p.causal = flag("causal", true);
    p.window = u32("window", 0);
    p.rotary_dim = u32("rotary_dim", p.head_dim);
    if (p.rotary_dim % 2 != 0 || p.rotary_dim > p.head_dim)
      r_.fail(raw_.where + ".rotary_dim",
              fmt::format("expected an even number at most head_dim ({}), got {}", p.head_dim, p.rotary_dim));
    c.vocab = u32("vocab", c.vocab);
    c.q = dtype("q_dtype", "f16");
    c.basis = dtype("basis_dtype", "f16");
    c.out = dtype("out_dtype", std::string(to_string(c.q)));
    std::string name = fmt::format("bdpa {} B{} S{} H{}/{} D{} L{} {}/{}", p.seq_len == 1 ? "decode" : "prefill",
                                   p.batch, p.seq_len, p.num_heads, p.num_kv_heads, p.head_dim, kv_len,
                                   to_string(c.q), to_string(c.basis));
    if (c.out != c.q) name += fmt::format("->{}", to_string(c.out));
    name += fmt::format(" rope{} vocab{}", p.rotary_dim, c.vocab);
    if (p.seq_len > 1 && !p.causal) name += " noncausal";
    if (p.window) name += fmt::format(" w{}", p.window);
    return name;
  }

  std::string build_probe(ProbeSpec& p) {
    const std::string kind = text("probe", "");
    const ProbeName* found = nullptr;
    for (const auto& n : kProbes)
      if (kind == n.name) found = &n;
    if (!found) r_.fail(raw_.where + ".probe", fmt::format("expected {}, got \"{}\"", expected_one_of(kProbes), kind));
    p.kind = found->kind;
    p.bytes = count("bytes", p.bytes);
    p.workgroups = u32("workgroups", p.workgroups);
    p.iterations = u32("iterations", p.iterations);
    switch (p.kind) {
      case ProbeKind::read_bandwidth: return fmt::format("probe read_bandwidth {} MiB", p.bytes >> 20);
      case ProbeKind::coopmat_fp16: return fmt::format("probe coopmat_fp16 x{}", p.iterations);
      case ProbeKind::dispatch_floor: break;  // no size of its own
    }
    return fmt::format("probe {}", found->name);
  }

  const Reader& r_;
  const RawCase& raw_;
};

// The product of a grid's axes, in the order the file lists them.
void expand_grid(const Reader& r, const Json& grid, const std::string& where, const Json& defaults,
                 std::vector<RawCase>& out) {
  if (!grid.is_object()) r.fail(where, fmt::format("expected an object with \"axes\", got {}", grid.dump()));
  for (const auto& [key, value] : grid.items())
    if (key != "fields" && key != "axes") r.fail(where, fmt::format("unknown key \"{}\" (expected fields, axes)", key));
  const Json fields = grid.value("fields", Json::object());
  r.check_fields(fields, where + ".fields");
  if (!grid.contains("axes") || !grid["axes"].is_object() || grid["axes"].empty())
    r.fail(where + ".axes", "expected an object of axes (name: list of values)");
  struct Axis {
    std::string name;
    std::vector<Json> values;  // each an object of fields
  };
  std::vector<Axis> axes;
  for (const auto& [name, list] : grid["axes"].items()) {
    const std::string at = where + ".axes." + name;
    if (!list.is_array() || list.empty()) r.fail(at, fmt::format("expected a non-empty list, got {}", list.dump()));
    Axis axis{name, {}};
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string item = fmt::format("{}[{}]", at, i);
      Json obj = list[i].is_object() ? list[i] : Json{{name, list[i]}};
      if (!list[i].is_object()) r.check_value(r.field(name, at), list[i], item);
      else r.check_fields(obj, item);
      axis.values.push_back(std::move(obj));
    }
    axes.push_back(std::move(axis));
  }
  std::vector<size_t> index(axes.size(), 0);
  for (size_t n = 0;; ++n) {
    RawCase c;
    c.where = fmt::format("{} case #{}", where, n);
    merge(c, defaults, false);
    merge(c, fields, true);
    for (size_t a = 0; a < axes.size(); ++a) merge(c, axes[a].values[index[a]], true);
    out.push_back(std::move(c));
    size_t a = axes.size();
    while (a > 0 && ++index[a - 1] == axes[a - 1].values.size()) index[--a] = 0;
    if (a == 0) break;
  }
}

}  // namespace

std::string_view to_string(BenchFamily f) {
  for (const auto& n : kBenchFamilies)
    if (n.family == f) return n.name;
  return "?";
}

std::string_view to_string(ProbeKind k) {
  for (const auto& n : kProbes)
    if (n.kind == k) return n.name;
  return "?";
}

TextCase make_text_bench_case(uint32_t batch, uint32_t seq_len, uint32_t heads, uint32_t kv_heads,
                              uint32_t head_dim, uint32_t kv_len, KvLayout layout, uint32_t page_size) {
  TextCase c;
  auto& p = c.params;
  p.batch = batch;
  p.seq_len = seq_len;
  p.num_heads = heads;
  p.num_kv_heads = kv_heads;
  p.head_dim = head_dim;
  p.layout = layout;
  p.kv_len = {kv_len};
  p.causal = true;
  switch (layout) {
    case KvLayout::contiguous: p.kv_capacity = kv_len; break;
    case KvLayout::ring:
      // Positions start half-way round the ring, so the keys wrap past its end.
      p.kv_capacity = kv_len;
      p.kv_start = {kv_len / 2};
      break;
    case KvLayout::paged:
      p.kv_capacity = page_size;
      p.max_pages = page_size ? (kv_len + page_size - 1) / page_size : 0;
      p.num_pages = batch * p.max_pages;
      break;
    case KvLayout::tiered:  // not a bench layout: suites and `bench --layout` name the other three
      break;
  }
  p.start_pos = {p.kv_start[0] + kv_len - seq_len};
  c.scramble_pages = true;
  return c;
}

std::string text_bench_name(const TextCase& c) {
  const auto& p = c.params;
  std::string s = fmt::format("{} B{} S{} H{}/{} D{} L{} {}", p.seq_len == 1 ? "decode" : "prefill", p.batch,
                              p.seq_len, p.num_heads, p.num_kv_heads, p.head_dim, p.kv_len[0], to_string(p.layout));
  if (p.layout == KvLayout::tiered) s += fmt::format(" hot{} cold {}", p.hot_window, to_string(p.cold_layout));
  if (p.slot_layout() == KvLayout::paged) s += fmt::format(" ps{}", p.kv_capacity);
  s += fmt::format(" {}/{}", to_string(c.q), to_string(c.kv));
  if (c.out != c.q) s += fmt::format("->{}", to_string(c.out));
  if (p.seq_len > 1 && !p.causal) s += " noncausal";
  if (p.window) s += fmt::format(" w{}", p.window);
  if (p.softcap > 0) s += fmt::format(" softcap{}", p.softcap);
  if (p.scale) s += fmt::format(" scale{}", *p.scale);
  if (c.recorded_at) s += fmt::format(" recorded@{}", c.recorded_at);
  return s;
}

BenchSuite parse_bench_suite(const std::string& json_text, const std::string& source) {
  const Reader r(source);
  Json doc;
  try {
    doc = Json::parse(json_text);
  } catch (const Json::parse_error& e) {
    r.fail("(file)", fmt::format("not valid JSON: {}", e.what()));
  }
  if (!doc.is_object()) r.fail("(file)", "expected an object with \"grids\" and/or \"cases\"");
  for (const auto& [key, value] : doc.items())
    if (key != "suite" && key != "description" && key != "defaults" && key != "grids" && key != "cases")
      r.fail(key, "unknown key (expected suite, description, defaults, grids, cases)");
  BenchSuite suite;
  suite.source = source;
  suite.name = fs::path(source).stem().string();
  for (const char* key : {"suite", "description"})
    if (doc.contains(key) && !doc[key].is_string()) r.fail(key, fmt::format("expected a string, got {}", doc[key].dump()));
  suite.name = doc.value("suite", suite.name);
  suite.description = doc.value("description", "");
  const Json defaults = doc.value("defaults", Json::object());
  r.check_fields(defaults, "defaults");

  std::vector<RawCase> raw;
  for (const char* key : {"grids", "cases"})
    if (doc.contains(key) && !doc[key].is_array()) r.fail(key, fmt::format("expected a list, got {}", doc[key].dump()));
  const Json grids = doc.value("grids", Json::array());
  for (size_t g = 0; g < grids.size(); ++g) expand_grid(r, grids[g], fmt::format("grids[{}]", g), defaults, raw);
  const Json cases = doc.value("cases", Json::array());
  for (size_t i = 0; i < cases.size(); ++i) {
    RawCase c;
    c.where = fmt::format("cases[{}]", i);
    r.check_fields(cases[i], c.where);
    merge(c, defaults, false);
    merge(c, cases[i], true);
    raw.push_back(std::move(c));
  }
  if (raw.empty()) r.fail("(file)", "no cases: expected a non-empty \"grids\" or \"cases\" list");

  std::map<std::string, std::string> seen;  // name -> where
  for (const RawCase& c : raw) {
    BenchSpec spec = CaseBuilder(r, c).build();
    auto [it, fresh] = seen.emplace(spec.name, c.where);
    if (!fresh) r.fail(c.where, fmt::format("duplicate case name \"{}\" (also {})", spec.name, it->second));
    suite.cases.push_back(std::move(spec));
  }
  return suite;
}

BenchSuite load_bench_suite_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(ErrorKind::io, fmt::format("suite file: cannot read {}", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_bench_suite(ss.str(), path);
}

std::vector<fs::path> bench_suite_dirs() {
  std::vector<fs::path> dirs;
  if (const char* env = std::getenv("VKATTN_BENCH_SUITES"); env && *env) dirs.emplace_back(env);
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path bin = exe.parent_path();
    for (const fs::path& d : {bin / "bench/suites", bin.parent_path() / "bench/suites",
                              bin.parent_path() / "share/vkattn/bench/suites"})
      if (fs::is_directory(d, ec)) dirs.push_back(d);
  }
  return dirs;
}

BenchSuite find_bench_suite(const std::string& name_or_path) {
  const bool is_path = name_or_path.find('/') != std::string::npos || fs::path(name_or_path).extension() == ".json";
  if (is_path) return load_bench_suite_file(name_or_path);
  std::vector<std::string> found;
  const auto dirs = bench_suite_dirs();
  for (const fs::path& dir : dirs) {
    const fs::path file = dir / (name_or_path + ".json");
    if (fs::is_regular_file(file)) return load_bench_suite_file(file.string());
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.path().extension() == ".json") found.push_back(e.path().stem().string());
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> where;
  for (const auto& d : dirs) where.push_back(d.string());
  throw Error(ErrorKind::invalid_argument,
              fmt::format("suite: no suite named \"{}\" in {} (found: {}; set VKATTN_BENCH_SUITES or give a path)",
                          name_or_path, where.empty() ? "no suite directory" : fmt::format("{}", fmt::join(where, ", ")),
                          found.empty() ? "none" : fmt::format("{}", fmt::join(found, ", "))));
}

}  // namespace vkattn::check

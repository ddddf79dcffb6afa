// The `vkattn` Python module: devices, contexts and every op on NumPy arrays
// (float32, float16; bfloat16 as uint16 views; quantized caches as uint32
// words), and plans as dicts. Errors
// raise ValueError (bad input) or RuntimeError with the library's message.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <fmt/format.h>

#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "vkattn/plan.hpp"
#include "vkattn/text.hpp"
#include "vkattn/vision.hpp"
#include "vkattn/vkattn.hpp"

namespace py = pybind11;

namespace vkattn::python {
namespace {

// One value for every sequence, or one per sequence.
using PerSequence = std::variant<uint32_t, std::vector<uint32_t>>;

std::vector<uint32_t> per_sequence(const std::optional<PerSequence>& v, std::vector<uint32_t> fallback) {
  if (!v) return fallback;
  if (const auto* one = std::get_if<uint32_t>(&*v)) return {*one};
  return std::get<std::vector<uint32_t>>(*v);
}

[[noreturn]] void bad(const std::string& message) { throw Error(ErrorKind::invalid_argument, message); }

// The vkattn dtype a NumPy array holds: float32, float16, or uint16 read as bfloat16.
DType dtype_of(const py::array& a, const char* name) {
  const char kind = a.dtype().kind();
  const auto size = a.dtype().itemsize();
  if (kind == 'f' && size == 4) return DType::f32;
  if (kind == 'f' && size == 2) return DType::f16;
  if (kind == 'u' && size == 2) return DType::bf16;
  if (kind == 'u' && size == 4) return DType::u32;
  bad(fmt::format("{}: expected float32, float16 or uint16 (bfloat16 bits), got {}", name,
                  py::str(a.dtype()).cast<std::string>()));
}

py::dtype numpy_dtype(DType t) {
  switch (t) {
    case DType::f32: return py::dtype::of<float>();
    case DType::f16: return py::dtype("float16");
    case DType::bf16: return py::dtype::of<uint16_t>();
    case DType::u32: return py::dtype::of<uint32_t>();
    default: bad(fmt::format("out_dtype: expected f32, f16 or bf16, got {}", to_string(t)));
  }
}

Shape shape_of(const py::array& a) { return Shape(a.shape(), a.shape() + a.ndim()); }

// A context with the helpers the ops share: arrays in, arrays out.
class ArrayContext {
 public:
  ArrayContext(const std::string& device, std::optional<bool> validation)
      : ctx_(ContextOptions{device, validation ? int(*validation) : -1}) {}

  Context& ctx() { return ctx_; }

  // A device tensor holding `array` (any layout; copied C-contiguous).
  Tensor upload(const py::array& array, const char* name, size_t rank) {
    if (static_cast<size_t>(array.ndim()) != rank)
      bad(fmt::format("{}: expected {} dimensions, got {}", name, rank, array.ndim()));
    const py::array c = py::array::ensure(array, py::array::c_style);
    Tensor t = ctx_.tensor(dtype_of(c, name), shape_of(c));
    ctx_.upload(t, {static_cast<const std::byte*>(c.data()), static_cast<size_t>(c.nbytes())});
    return t;
  }

  // u32 words of packed i8/i4 codes [.., words] as a tensor of `dtype` [.., words * codes per word].
  Tensor upload_packed(const py::array& array, const char* name, DType dtype) {
    if (array.ndim() != 4 || dtype_of(array, name) != DType::u32 || (dtype != DType::i8 && dtype != DType::i4))
      bad(fmt::format("{}: expected 4-d uint32 words with kv_dtype 'i8' or 'i4', got {} dimensions of {} with '{}'",
                      name, array.ndim(), py::str(array.dtype()).cast<std::string>(), to_string(dtype)));
    const py::array c = py::array::ensure(array, py::array::c_style);
    Shape shape = shape_of(c);
    shape.back() *= 32 / dtype_bits(dtype);
    Tensor t = ctx_.tensor(dtype, shape);
    ctx_.upload(t, {static_cast<const std::byte*>(c.data()), static_cast<size_t>(c.nbytes())});
    return t;
  }

  Tensor output(DType dtype, const Shape& shape) { return ctx_.tensor(dtype, shape); }

  py::array download(const Tensor& t) {
    std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
    py::array out(numpy_dtype(t.dtype()), shape);
    ctx_.download(t, {static_cast<std::byte*>(out.mutable_data()), static_cast<size_t>(out.nbytes())});
    return out;
  }

  // Records `record` into a fresh recorder and runs it, without the GIL.
  template <class F>
  void run(F&& record) {
    py::gil_scoped_release release;
    Recorder rec(ctx_);
    record(rec);
    rec.run();
  }

 private:
  Context ctx_;
};

PlanOptions plan_options(const std::optional<std::string>& variant, bool strict) {
  PlanOptions o;
  if (variant) o.variant = *variant;
  o.strict = strict;
  return o;
}

py::object json_to_python(const std::string& json) { return py::module_::import("json").attr("loads")(json); }

DType out_dtype_or(const std::optional<std::string>& name, DType fallback) {
  return name ? dtype_from_string(*name) : fallback;
}

// Quantizes a float cache [N, C, Hkv, D] into doppler's int8/int4 format on
// the GPU (kv_append): (u32 words [N, C, Hkv, packed_stride], float16 scales
// [N, C, Hkv] or [N, C, Hkv, ceil(D/32)]).
py::tuple quantize_kv(ArrayContext& self, const py::array& x, const std::string& dtype, uint32_t quant_group) {
  const DType dt = dtype_from_string(dtype);
  if (dt != DType::i8 && dt != DType::i4) bad(fmt::format("dtype: expected 'i8' or 'i4', got '{}'", dtype));
  KvAppendTensors t;
  t.k = self.upload(x, "x", 4);
  const Shape s = t.k.shape();
  const uint64_t slots = s[0] * s[1];
  const uint32_t d = static_cast<uint32_t>(s[3]), lanes = 32 / dtype_bits(dt);
  KvAppendParams p;  // every slot a token of one contiguous sequence
  p.tokens = static_cast<uint32_t>(slots);
  p.num_kv_heads = static_cast<uint32_t>(s[2]);
  p.head_dim = d;
  p.kv_capacity = static_cast<uint32_t>(slots);
  p.quant_group = quant_group;
  const Shape rows{1, slots, s[2], d};
  Shape scales{1, slots, s[2]};
  if (quant_group) scales.push_back((d + quant_group - 1) / quant_group);
  t.k = t.k.reshaped(rows);
  t.v = t.k;
  t.cache_k = self.output(dt, rows);
  t.cache_v = self.output(dt, rows);
  t.k_scale = self.output(DType::f16, scales);
  t.v_scale = self.output(DType::f16, scales);
  self.run([&](Recorder& rec) { kv_append(rec, p, t); });
  Shape words_shape = s;
  words_shape.back() = (d + lanes - 1) / lanes;
  Shape scale_shape(s.begin(), s.end() - 1);
  if (quant_group) scale_shape.push_back(scales.back());
  const Tensor& c = t.cache_k;  // the packed codes, read back as their u32 words
  py::array words = self.download(Tensor(c.allocation(), c.buffer(), c.offset(), c.bytes(), DType::u32, words_shape));
  return py::make_tuple(words, self.download(t.k_scale.reshaped(scale_shape)));
}

py::array text_attention(ArrayContext& self, const py::array& q, const py::array& k, const py::array& v, bool causal,
                         uint32_t window, float softcap, std::optional<float> scale, const std::string& layout,
                         std::optional<PerSequence> kv_len, std::optional<PerSequence> start_pos,
                         std::optional<PerSequence> kv_start, std::optional<py::array> page_table,
                         std::optional<std::string> out_dtype, std::optional<std::string> variant, bool strict,
                         std::optional<py::array> k_scale, std::optional<py::array> v_scale,
                         std::optional<std::string> kv_dtype, uint32_t quant_group) {
  TextAttentionTensors t;
  TextAttentionParams p;
  t.q = self.upload(q, "q", 4);
  if (kv_dtype) {
    // A quantized cache: u32 words [.., Hkv, packed_stride] (as quantize_kv returns) and float16 scales.
    const DType dt = dtype_from_string(*kv_dtype);
    if (!k_scale || !v_scale) bad("k_scale: expected float16 scale arrays with kv_dtype, got None");
    t.k = self.upload_packed(k, "k", dt);
    t.v = self.upload_packed(v, "v", dt);
    t.k_scale = self.upload(*k_scale, "k_scale", static_cast<size_t>(k_scale->ndim()));
    t.v_scale = self.upload(*v_scale, "v_scale", static_cast<size_t>(v_scale->ndim()));
    p.kv_quant_group = quant_group;
  } else {
    t.k = self.upload(k, "k", 4);
    t.v = self.upload(v, "v", 4);
  }
  const Shape& qs = t.q.shape();
  const Shape& ks = t.k.shape();
  p.batch = static_cast<uint32_t>(qs[0]);
  p.seq_len = static_cast<uint32_t>(qs[1]);
  p.num_heads = static_cast<uint32_t>(qs[2]);
  p.head_dim = static_cast<uint32_t>(qs[3]);
  p.num_kv_heads = static_cast<uint32_t>(ks[2]);
  p.causal = causal;
  p.window = window;
  p.softcap = softcap;
  p.scale = scale;
  p.layout = kv_layout_from_string(layout);
  // k is [B, C, Hkv, D], or the paged pool [P, page_size, Hkv, D].
  p.kv_capacity = static_cast<uint32_t>(ks[1]);
  if (p.layout == KvLayout::paged) {
    if (!page_table) bad("page_table: expected a [B, max_pages] uint32 array for the paged layout, got None");
    t.page_table = self.upload(*page_table, "page_table", 2);
    p.num_pages = static_cast<uint32_t>(ks[0]);
    p.max_pages = static_cast<uint32_t>(t.page_table.shape()[1]);
  }
  p.kv_start = per_sequence(kv_start, {0});
  // Defaults as `vkattn run text`: every key after kv_start; the queries are the last S positions.
  const uint32_t slots = p.layout == KvLayout::paged ? p.max_pages * p.kv_capacity : p.kv_capacity;
  std::vector<uint32_t> default_len;
  for (uint32_t start : p.kv_start)
    default_len.push_back(p.layout == KvLayout::ring ? slots : (slots > start ? slots - start : 0));
  p.kv_len = per_sequence(kv_len, default_len);
  std::vector<uint32_t> default_start;
  for (uint32_t b = 0; b < std::max(p.kv_len.size(), p.kv_start.size()); ++b) {
    const uint32_t end = p.kv_start_of(b) + p.kv_len_of(b);
    default_start.push_back(end >= p.seq_len ? end - p.seq_len : 0);
  }
  p.start_pos = per_sequence(start_pos, default_start);
  t.out = self.output(out_dtype_or(out_dtype, t.q.dtype()), qs);
  self.run([&](Recorder& rec) { vkattn::text_attention(rec, p, t, plan_options(variant, strict)); });
  return self.download(t.out);
}

py::array vision_attention(ArrayContext& self, const py::array& q, const py::array& k, const py::array& v,
                           std::optional<float> scale, const std::string& layout, std::optional<std::string> out_dtype,
                           std::optional<std::string> variant, bool strict) {
  VisionAttentionTensors t{self.upload(q, "q", 3), self.upload(k, "k", 3), self.upload(v, "v", 3), {}};
  VisionAttentionParams p;
  p.layout = vision_layout_from_string(layout);
  const Shape& s = t.q.shape();
  p.patches = static_cast<uint32_t>(p.layout == VisionLayout::phd ? s[0] : s[1]);
  p.num_heads = static_cast<uint32_t>(p.layout == VisionLayout::phd ? s[1] : s[0]);
  p.head_dim = static_cast<uint32_t>(s[2]);
  p.scale = scale;
  t.out = self.output(out_dtype_or(out_dtype, t.q.dtype()), s);
  self.run([&](Recorder& rec) { vkattn::vision_attention(rec, p, t, plan_options(variant, strict)); });
  return self.download(t.out);
}

py::array pos_embed_add(ArrayContext& self, const py::array& hidden, const py::array& table, uint32_t patches_x) {
  PosEmbedTensors t{self.upload(hidden, "hidden", 2), self.upload(table, "table", 3)};
  const PosEmbedParams p{static_cast<uint32_t>(t.hidden.shape()[0]), static_cast<uint32_t>(t.hidden.shape()[1]),
                         static_cast<uint32_t>(t.table.shape()[1]), patches_x};
  self.run([&](Recorder& rec) { vkattn::pos_embed_add(rec, p, t); });
  return self.download(t.hidden);
}

py::array audio_attention(ArrayContext& self, const py::array& q, const py::array& k, const py::array& v,
                          const py::array& per_dim_scale, const py::array& rel_pos, uint32_t chunk, uint32_t max_past,
                          uint32_t max_future, float logit_cap, bool scale_keys, bool include_past_edge,
                          std::optional<std::string> variant, bool strict) {
  AudioAttentionTensors t{self.upload(q, "q", 3),
                          self.upload(k, "k", 3),
                          self.upload(v, "v", 3),
                          self.upload(per_dim_scale, "per_dim_scale", 1),
                          self.upload(rel_pos, "rel_pos", 3),
                          {}};
  AudioAttentionParams p;
  p.frames = static_cast<uint32_t>(t.q.shape()[0]);
  p.num_heads = static_cast<uint32_t>(t.q.shape()[1]);
  p.head_dim = static_cast<uint32_t>(t.q.shape()[2]);
  p.chunk = chunk;
  p.max_past = max_past;
  p.max_future = max_future;
  p.logit_cap = logit_cap;
  p.scale_keys = scale_keys;
  p.include_past_edge = include_past_edge;
  t.out = self.output(t.q.dtype(), t.q.shape());
  self.run([&](Recorder& rec) { vkattn::audio_attention(rec, p, t, plan_options(variant, strict)); });
  return self.download(t.out);
}

py::object plan_text(ArrayContext& self, uint32_t batch, uint32_t seq_len, uint32_t heads, uint32_t kv_heads,
                     uint32_t head_dim, uint32_t kv_len, const std::string& q_dtype, const std::string& kv_dtype,
                     std::optional<std::string> variant, bool strict) {
  // A contiguous cache holding exactly the keys; the queries are the last positions.
  TextAttentionParams p;
  p.batch = batch;
  p.seq_len = seq_len;
  p.num_heads = heads;
  p.num_kv_heads = kv_heads;
  p.head_dim = head_dim;
  p.kv_len = {kv_len};
  p.kv_capacity = kv_len;
  p.start_pos = {kv_len >= seq_len ? kv_len - seq_len : 0};
  const DType q = dtype_from_string(q_dtype);
  const TextTensorTypes types{q, dtype_from_string(kv_dtype), q, false};
  return json_to_python(to_json(vkattn::plan_text(self.ctx().caps(), p, types, plan_options(variant, strict))));
}

py::object plan_vision(ArrayContext& self, uint32_t patches, uint32_t heads, uint32_t head_dim,
                       const std::string& dtype, const std::string& layout, std::optional<std::string> variant,
                       bool strict) {
  const VisionAttentionParams p{patches, heads, head_dim, std::nullopt, vision_layout_from_string(layout)};
  const DType d = dtype_from_string(dtype);
  return json_to_python(to_json(vkattn::plan_vision(self.ctx().caps(), p, VisionTensorTypes{d, d},
                                                    plan_options(variant, strict))));
}

py::list devices() {
  py::list out;
  for (const auto& d : list_devices()) {
    py::dict caps = json_to_python(caps_to_json(d.caps));
    caps["index"] = d.index;
    out.append(caps);
  }
  return out;
}

}  // namespace
}  // namespace vkattn::python

PYBIND11_MODULE(vkattn, m) {
  using namespace vkattn::python;
  using namespace pybind11::literals;
  m.doc() = "vkattn: portable GPU attention for LLM inference on Vulkan compute";
  m.attr("__version__") = std::string(vkattn::version());
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const vkattn::Error& e) {
      if (e.kind() == vkattn::ErrorKind::invalid_argument) PyErr_SetString(PyExc_ValueError, e.what());
      else PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });
  m.def("devices", &devices, "Every Vulkan device and its capabilities, as dicts (the caps-file format)");
  py::class_<ArrayContext>(m, "Context", "A Vulkan device vkattn runs on")
      .def(py::init<const std::string&, std::optional<bool>>(), "device"_a = "", "validation"_a = py::none(),
           "device: auto | cpu | gpu | <index> | <name substring> ('' : $VKATTN_DEVICE, else auto)")
      .def_property_readonly(
          "device", [](ArrayContext& c) { return json_to_python(vkattn::caps_to_json(c.ctx().caps())); },
          "The device's capabilities, as a dict")
      .def("text_attention", &text_attention, "q"_a, "k"_a, "v"_a, py::kw_only(), "causal"_a = false, "window"_a = 0,
           "softcap"_a = 0.0f, "scale"_a = py::none(), "layout"_a = "contiguous", "kv_len"_a = py::none(),
           "start_pos"_a = py::none(), "kv_start"_a = py::none(), "page_table"_a = py::none(),
           "out_dtype"_a = py::none(), "variant"_a = py::none(), "strict"_a = false, "k_scale"_a = py::none(),
           "v_scale"_a = py::none(), "kv_dtype"_a = py::none(), "quant_group"_a = 0,
           "Text attention: q [B, S, H, D]; k, v [B, C, Hkv, D] (or the paged pool with page_table), or with "
           "kv_dtype 'i8'/'i4' quantized words and float16 k_scale/v_scale as quantize_kv returns; "
           "returns [B, S, H, D]")
      .def("quantize_kv", &quantize_kv, "x"_a, py::kw_only(), "dtype"_a = "i8", "quant_group"_a = 0,
           "A float cache [N, C, Hkv, D] quantized on the GPU: (uint32 words [N, C, Hkv, packed_stride], "
           "float16 scales [N, C, Hkv] or [N, C, Hkv, ceil(D/32)] with quant_group=32)")
      .def("vision_attention", &vision_attention, "q"_a, "k"_a, "v"_a, py::kw_only(), "scale"_a = py::none(),
           "layout"_a = "phd", "out_dtype"_a = py::none(), "variant"_a = py::none(), "strict"_a = false,
           "Bidirectional attention over patches: q, k, v [P, H, D] (or [H, P, D] with layout='hpd')")
      .def("pos_embed_add", &pos_embed_add, "hidden"_a, "table"_a, py::kw_only(), "patches_x"_a,
           "hidden [P, hidden] + table[0, p % patches_x] + table[1, p // patches_x], as a new array")
      .def("audio_attention", &audio_attention, "q"_a, "k"_a, "v"_a, "per_dim_scale"_a, "rel_pos"_a, py::kw_only(),
           "chunk"_a = 12, "max_past"_a = 12, "max_future"_a = 0, "logit_cap"_a = 50.0f, "scale_keys"_a = true,
           "include_past_edge"_a = false, "variant"_a = py::none(), "strict"_a = false,
           "Block-local Conformer attention: q, k, v [T, H, D]; rel_pos [P + F + 1, H, D]; per_dim_scale [D]")
      .def("plan_text", &plan_text, py::kw_only(), "batch"_a = 1, "seq_len"_a = 1, "heads"_a = 32, "kv_heads"_a = 8,
           "head_dim"_a = 128, "kv_len"_a = 4096, "q_dtype"_a = "f32", "kv_dtype"_a = "f16", "variant"_a = py::none(),
           "strict"_a = false, "The plan of a text-attention call on this device, as a dict, without running it")
      .def("plan_vision", &plan_vision, py::kw_only(), "patches"_a = 2304, "heads"_a = 12, "head_dim"_a = 64,
           "dtype"_a = "f32", "layout"_a = "phd", "variant"_a = py::none(), "strict"_a = false,
           "The plan of a vision-attention call on this device, as a dict, without running it");
}

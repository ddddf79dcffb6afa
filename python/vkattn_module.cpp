// The `vkattn` Python module: devices, contexts and every op on NumPy arrays
// (float32, float16; bfloat16 as uint16 views; quantized caches as uint32
// words; BDPA residuals as int8), the page allocator, and plans as dicts.
// Errors raise ValueError (bad input) or RuntimeError with the library's message.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <fmt/format.h>

#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "vkattn/bdpa.hpp"
#include "vkattn/kvcache.hpp"
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
  if (kind == 'i' && size == 1) return DType::i8;
  bad(fmt::format("{}: expected float32, float16, uint16 (bfloat16 bits), uint32 or int8, got {}", name,
                  py::str(a.dtype()).cast<std::string>()));
}

py::dtype numpy_dtype(DType t) {
  switch (t) {
    case DType::f32: return py::dtype::of<float>();
    case DType::f16: return py::dtype("float16");
    case DType::bf16: return py::dtype::of<uint16_t>();
    case DType::u32: return py::dtype::of<uint32_t>();
    case DType::i8: return py::dtype::of<int8_t>();
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

  // The u32 words of a packed i8/i4 tensor [.., D] as an array [.., words] (upload_packed's input).
  py::array download_packed(const Tensor& t) {
    Shape words = t.shape();
    words.back() = (words.back() * dtype_bits(t.dtype()) + 31) / 32;
    return download(Tensor(t.allocation(), t.buffer(), t.offset(), t.bytes(), DType::u32, words));
  }

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

// batch, seq_len, num_heads and head_dim of a text or BDPA call from Q [B, S, H, D].
template <class Params>
void set_query_dims(Params& p, const Shape& q) {
  p.batch = static_cast<uint32_t>(q[0]);
  p.seq_len = static_cast<uint32_t>(q[1]);
  p.num_heads = static_cast<uint32_t>(q[2]);
  p.head_dim = static_cast<uint32_t>(q[3]);
}

// The call a plan query describes: kv_len keys in kv_len slots, the queries the last positions.
template <class Params>
Params planned_call(uint32_t batch, uint32_t seq_len, uint32_t heads, uint32_t kv_heads, uint32_t head_dim,
                    uint32_t kv_len) {
  Params p;
  p.batch = batch;
  p.seq_len = seq_len;
  p.num_heads = heads;
  p.num_kv_heads = kv_heads;
  p.head_dim = head_dim;
  p.kv_len = {kv_len};
  p.kv_capacity = kv_len;
  p.start_pos = {kv_len >= seq_len ? kv_len - seq_len : 0};
  return p;
}

// The tuning values (splits, keys per step, query rows per workgroup; 0: the
// planner's) are taken by the text calls, the other families reject them.
PlanOptions plan_options(const std::optional<std::string>& variant, bool strict, uint32_t splits = 0,
                         uint32_t tile_keys = 0, uint32_t rows = 0) {
  PlanOptions o;
  if (variant) o.variant = *variant;
  o.strict = strict;
  o.splits = splits;
  o.tile_keys = tile_keys;
  o.rows = rows;
  return o;
}

py::object json_to_python(const std::string& json) { return py::module_::import("json").attr("loads")(json); }

DType out_dtype_or(const std::optional<std::string>& name, DType fallback) {
  return name ? dtype_from_string(*name) : fallback;
}

// The cache's layout of a text or kv_append call: `cache` is the K tensor's
// shape, [B, C, Hkv, D] or the paged pool [P, page_size, Hkv, D] (the cold
// tier's, under a tiered layout's hot ring hot_k/hot_v [B, hot_window, Hkv, D]).
template <class Params, class Tensors>
void set_cache_layout(ArrayContext& self, Params& p, Tensors& t, const Shape& cache, const std::string& layout,
                      const std::string& cold_layout, const std::optional<py::array>& hot_k,
                      const std::optional<py::array>& hot_v, const std::optional<py::array>& page_table) {
  p.layout = kv_layout_from_string(layout);
  if (p.layout == KvLayout::tiered) {
    if (!hot_k || !hot_v) bad("hot_k: expected float16 [B, hot_window, Hkv, D] arrays for the tiered layout, got None");
    t.hot_k = self.upload(*hot_k, "hot_k", 4);
    t.hot_v = self.upload(*hot_v, "hot_v", 4);
    p.hot_window = static_cast<uint32_t>(t.hot_k.shape()[1]);
    p.cold_layout = kv_layout_from_string(cold_layout);
  }
  p.kv_capacity = static_cast<uint32_t>(cache[1]);
  if (p.slot_layout() == KvLayout::paged) {
    if (!page_table) bad("page_table: expected a [B, max_pages] uint32 array for the paged layout, got None");
    t.page_table = self.upload(*page_table, "page_table", 2);
    p.num_pages = static_cast<uint32_t>(cache[0]);
    p.max_pages = static_cast<uint32_t>(t.page_table.shape()[1]);
  }
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
  const uint32_t d = static_cast<uint32_t>(s[3]);
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
  self.run([&](Recorder& rec) { vkattn::kv_append(rec, p, t); });
  Shape scale_shape(s.begin(), s.end() - 1);
  if (quant_group) scale_shape.push_back(scales.back());
  return py::make_tuple(self.download_packed(t.cache_k.reshaped(s)), self.download(t.k_scale.reshaped(scale_shape)));
}

// Writes new rows k, v [B, T, Hkv, D] into a cache at `positions` on the GPU
// (vkattn::kv_append) and returns the cache's arrays after the write: a dict
// of cache_k, cache_v, and k_scale, v_scale (kv_dtype 'i8'/'i4': words and
// float16 scales as quantize_kv returns) and hot_k, hot_v (layout 'tiered').
py::dict kv_append(ArrayContext& self, const py::array& k, const py::array& v, const py::array& cache_k,
                   const py::array& cache_v, const PerSequence& positions, const std::string& layout,
                   std::optional<py::array> page_table, std::optional<py::array> k_scale,
                   std::optional<py::array> v_scale, std::optional<std::string> kv_dtype, uint32_t quant_group,
                   std::optional<py::array> hot_k, std::optional<py::array> hot_v, const std::string& cold_layout) {
  KvAppendTensors t;
  KvAppendParams p;
  t.k = self.upload(k, "k", 4);
  t.v = self.upload(v, "v", 4);
  if (kv_dtype) {
    const DType dt = dtype_from_string(*kv_dtype);
    if (!k_scale || !v_scale) bad("k_scale: expected float16 scale arrays with kv_dtype, got None");
    t.cache_k = self.upload_packed(cache_k, "cache_k", dt);
    t.cache_v = self.upload_packed(cache_v, "cache_v", dt);
    t.k_scale = self.upload(*k_scale, "k_scale", static_cast<size_t>(k_scale->ndim()));
    t.v_scale = self.upload(*v_scale, "v_scale", static_cast<size_t>(v_scale->ndim()));
    p.quant_group = quant_group;
  } else {
    t.cache_k = self.upload(cache_k, "cache_k", 4);
    t.cache_v = self.upload(cache_v, "cache_v", 4);
  }
  const Shape& rows = t.k.shape();
  const Shape& cache = t.cache_k.shape();
  p.batch = static_cast<uint32_t>(rows[0]);
  p.tokens = static_cast<uint32_t>(rows[1]);
  p.num_kv_heads = static_cast<uint32_t>(rows[2]);
  p.head_dim = static_cast<uint32_t>(rows[3]);
  set_cache_layout(self, p, t, cache, layout, cold_layout, hot_k, hot_v, page_table);
  p.positions = per_sequence(positions, {0});
  self.run([&](Recorder& rec) { vkattn::kv_append(rec, p, t); });
  py::dict out;
  const bool packed = t.cache_k.dtype() == DType::i8 || t.cache_k.dtype() == DType::i4;
  out["cache_k"] = packed ? self.download_packed(t.cache_k) : self.download(t.cache_k);
  out["cache_v"] = packed ? self.download_packed(t.cache_v) : self.download(t.cache_v);
  if (packed) {
    out["k_scale"] = self.download(t.k_scale);
    out["v_scale"] = self.download(t.v_scale);
  }
  if (p.layout == KvLayout::tiered) {
    out["hot_k"] = self.download(t.hot_k);
    out["hot_v"] = self.download(t.hot_v);
  }
  return out;
}

py::array text_attention(ArrayContext& self, const py::array& q, const py::array& k, const py::array& v, bool causal,
                         uint32_t window, float softcap, std::optional<float> scale, const std::string& layout,
                         std::optional<PerSequence> kv_len, std::optional<PerSequence> start_pos,
                         std::optional<PerSequence> kv_start, std::optional<py::array> page_table,
                         std::optional<std::string> out_dtype, std::optional<std::string> variant, bool strict,
                         std::optional<py::array> k_scale, std::optional<py::array> v_scale,
                         std::optional<std::string> kv_dtype, uint32_t quant_group, std::optional<py::array> hot_k,
                         std::optional<py::array> hot_v, const std::string& cold_layout, uint32_t splits,
                         uint32_t tile_keys, uint32_t rows) {
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
  set_query_dims(p, qs);
  p.num_kv_heads = static_cast<uint32_t>(ks[2]);
  p.causal = causal;
  p.window = window;
  p.softcap = softcap;
  p.scale = scale;
  set_cache_layout(self, p, t, ks, layout, cold_layout, hot_k, hot_v, page_table);
  p.kv_start = per_sequence(kv_start, {0});
  // Defaults as `vkattn run text`: every key after kv_start; the queries are the last S positions.
  const uint32_t slots = p.slot_layout() == KvLayout::paged ? p.max_pages * p.kv_capacity : p.kv_capacity;
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
  self.run([&](Recorder& rec) { vkattn::text_attention(rec, p, t, plan_options(variant, strict, splits, tile_keys, rows)); });
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

// The BDPA call of these tensors: the pools' rows, the index's capacity and
// the RoPE tables' size from their shapes; lengths default to the whole index
// and the queries to the last positions.
BdpaParams bdpa_params(const BdpaTensors& t, bool causal, uint32_t window, float softcap, std::optional<float> scale,
                       const std::string& pairing, std::optional<PerSequence> kv_len,
                       std::optional<PerSequence> start_pos) {
  BdpaParams p;
  set_query_dims(p, t.q.shape());
  p.num_kv_heads = static_cast<uint32_t>(t.basis_k.shape()[1]);
  p.causal = causal;
  p.window = window;
  p.softcap = softcap;
  p.scale = scale;
  p.kv_capacity = static_cast<uint32_t>(t.index.shape()[1]);
  p.num_basis = static_cast<uint32_t>(t.basis_k.shape()[0]);
  p.num_residual = static_cast<uint32_t>(t.residual_k.shape()[0]);
  if (t.rope_cos.valid()) {
    p.rope_positions = static_cast<uint32_t>(t.rope_cos.shape()[0]);
    p.rotary_dim = static_cast<uint32_t>(2 * t.rope_cos.shape()[1]);
  }
  p.pairing = rope_pairing_from_string(pairing);
  p.kv_len = per_sequence(kv_len, {p.kv_capacity});
  std::vector<uint32_t> default_start;
  for (uint32_t len : p.kv_len) default_start.push_back(len >= p.seq_len ? len - p.seq_len : 0);
  p.start_pos = per_sequence(start_pos, default_start);
  return p;
}

py::array bdpa_attention(ArrayContext& self, const py::array& q, const py::array& basis_k, const py::array& basis_v,
                         const py::array& residual_k, const py::array& residual_v, const py::array& residual_k_scale,
                         const py::array& residual_v_scale, const py::array& index, std::optional<py::array> rope_cos,
                         std::optional<py::array> rope_sin, bool causal, uint32_t window, float softcap,
                         std::optional<float> scale, const std::string& pairing, std::optional<PerSequence> kv_len,
                         std::optional<PerSequence> start_pos, std::optional<std::string> out_dtype,
                         std::optional<std::string> variant, bool strict) {
  BdpaTensors t;
  t.q = self.upload(q, "q", 4);
  t.basis_k = self.upload(basis_k, "basis_k", 3);
  t.basis_v = self.upload(basis_v, "basis_v", 3);
  t.residual_k = self.upload(residual_k, "residual_k", 3);
  t.residual_v = self.upload(residual_v, "residual_v", 3);
  t.residual_k_scale = self.upload(residual_k_scale, "residual_k_scale", 2);
  t.residual_v_scale = self.upload(residual_v_scale, "residual_v_scale", 2);
  t.index = self.upload(index, "index", 3);
  if (rope_cos.has_value() != rope_sin.has_value())
    bad(fmt::format("rope_sin: expected {} with rope_cos, got {}", rope_cos ? "an array" : "None",
                    rope_sin ? "an array" : "None"));
  if (rope_cos) {
    t.rope_cos = self.upload(*rope_cos, "rope_cos", 2);
    t.rope_sin = self.upload(*rope_sin, "rope_sin", 2);
  }
  const BdpaParams p = bdpa_params(t, causal, window, softcap, scale, pairing, kv_len, start_pos);
  t.out = self.output(out_dtype_or(out_dtype, t.q.dtype()), t.q.shape());
  self.run([&](Recorder& rec) { vkattn::bdpa_attention(rec, p, t, plan_options(variant, strict)); });
  return self.download(t.out);
}

// Builds a BDPA cache on the GPU from a contiguous pre-RoPE cache: a dict of
// its arrays (basis_k/v [B*C, Hkv, D] of basis_dtype, residual_k/v int8,
// residual_k/v_scale float32 [B*C, Hkv], index uint32 [B, C, 3]) and num_basis.
py::dict bdpa_build(ArrayContext& self, const py::array& k, const py::array& v, const py::array& token_ids,
                    uint32_t vocab_size, std::optional<PerSequence> kv_len, const std::string& basis_dtype) {
  BdpaBuildTensors t;
  t.k = self.upload(k, "k", 4);
  t.v = self.upload(v, "v", 4);
  t.token_ids = self.upload(token_ids, "token_ids", 2);
  const Shape& s = t.k.shape();
  BdpaBuildParams p;
  p.batch = static_cast<uint32_t>(s[0]);
  p.kv_capacity = static_cast<uint32_t>(s[1]);
  p.num_kv_heads = static_cast<uint32_t>(s[2]);
  p.head_dim = static_cast<uint32_t>(s[3]);
  p.vocab_size = vocab_size;
  p.kv_len = per_sequence(kv_len, {p.kv_capacity});
  const Shape rows{p.max_rows(), s[2], s[3]}, scales{p.max_rows(), s[2]};
  const DType basis = dtype_from_string(basis_dtype);
  t.basis_k = self.output(basis, rows);
  t.basis_v = self.output(basis, rows);
  t.residual_k = self.output(DType::i8, rows);
  t.residual_v = self.output(DType::i8, rows);
  t.residual_k_scale = self.output(DType::f32, scales);
  t.residual_v_scale = self.output(DType::f32, scales);
  t.index = self.output(DType::u32, {p.batch, p.kv_capacity, 3});
  t.num_basis = self.output(DType::u32, {1});
  self.run([&](Recorder& rec) { vkattn::bdpa_build(rec, p, t); });
  py::dict out;
  for (auto [name, tensor] : {std::pair{"basis_k", &t.basis_k}, {"basis_v", &t.basis_v},
                              {"residual_k", &t.residual_k}, {"residual_v", &t.residual_v},
                              {"residual_k_scale", &t.residual_k_scale}, {"residual_v_scale", &t.residual_v_scale},
                              {"index", &t.index}})
    out[name] = self.download(*tensor);
  out["num_basis"] = self.ctx().download_as<uint32_t>(t.num_basis).at(0);
  return out;
}

// check_bdpa_index over an index [B, kv_capacity, 3].
void check_bdpa_index(const py::array& index, uint32_t num_basis, uint32_t num_residual,
                      std::optional<PerSequence> kv_len, uint32_t rotary_dim, uint32_t rope_positions) {
  if (index.ndim() != 3 || dtype_of(index, "index") != DType::u32)
    bad(fmt::format("index: expected a 3-d uint32 array [B, kv_capacity, 3], got {} dimensions of {}", index.ndim(),
                    py::str(index.dtype()).cast<std::string>()));
  const auto c = py::array_t<uint32_t, py::array::c_style>::ensure(index);
  BdpaParams p;
  p.batch = static_cast<uint32_t>(c.shape(0));
  p.kv_capacity = static_cast<uint32_t>(c.shape(1));
  p.num_basis = num_basis;
  p.num_residual = num_residual;
  p.rotary_dim = rotary_dim;
  p.rope_positions = rope_positions;
  p.kv_len = per_sequence(kv_len, {p.kv_capacity});
  vkattn::check_bdpa_index(p, std::vector<uint32_t>(c.data(), c.data() + c.size()));
}

py::object plan_bdpa(ArrayContext& self, uint32_t batch, uint32_t seq_len, uint32_t heads, uint32_t kv_heads,
                     uint32_t head_dim, uint32_t kv_len, uint32_t rotary_dim, const std::string& q_dtype,
                     const std::string& basis_dtype, std::optional<std::string> variant, bool strict) {
  // An index holding exactly the keys over one basis and residual row per key.
  auto p = planned_call<BdpaParams>(batch, seq_len, heads, kv_heads, head_dim, kv_len);
  p.num_basis = p.num_residual = kv_len;
  p.rotary_dim = rotary_dim;
  p.rope_positions = rotary_dim ? kv_len : 0;
  const DType q = dtype_from_string(q_dtype);
  const BdpaTensorTypes types{q, dtype_from_string(basis_dtype), q, false};
  return json_to_python(to_json(vkattn::plan_bdpa(self.ctx().caps(), p, types, plan_options(variant, strict))));
}

// vkattn::PageAllocator for a context; the table as a NumPy array (the page_table of text_attention).
class PyPageAllocator {
 public:
  PyPageAllocator(ArrayContext& ctx, uint32_t num_pages, uint32_t page_size, uint32_t batch, uint32_t max_pages)
      : a_(ctx.ctx(), num_pages, page_size, batch, max_pages), batch_(batch), max_pages_(max_pages) {}
  void reserve(uint32_t seq, uint64_t length) { a_.reserve(seq, length); }
  void release(uint32_t seq) { a_.release(seq); }
  uint32_t free_pages() const { return a_.free_pages(); }
  py::array table() const {
    py::array_t<uint32_t> out({py::ssize_t(batch_), py::ssize_t(max_pages_)});
    std::copy(a_.host_table().begin(), a_.host_table().end(), out.mutable_data());
    return out;
  }
  void check(uint32_t seq, uint64_t first, uint64_t count) const { a_.check(seq, first, count); }
  void check_table(const py::array& table) const {
    if (dtype_of(table, "page_table") != DType::u32)
      bad(fmt::format("page_table: expected uint32, got {}", py::str(table.dtype()).cast<std::string>()));
    const auto c = py::array_t<uint32_t, py::array::c_style>::ensure(table);
    a_.check_table(std::vector<uint32_t>(c.data(), c.data() + c.size()));
  }

 private:
  PageAllocator a_;
  uint32_t batch_, max_pages_;
};

py::object plan_text(ArrayContext& self, uint32_t batch, uint32_t seq_len, uint32_t heads, uint32_t kv_heads,
                     uint32_t head_dim, uint32_t kv_len, const std::string& q_dtype, const std::string& kv_dtype,
                     std::optional<std::string> variant, bool strict, uint32_t splits, uint32_t tile_keys,
                     uint32_t rows) {
  // A contiguous cache holding exactly the keys.
  const auto p = planned_call<TextAttentionParams>(batch, seq_len, heads, kv_heads, head_dim, kv_len);
  const DType q = dtype_from_string(q_dtype);
  const TextTensorTypes types{q, dtype_from_string(kv_dtype), q, false};
  return json_to_python(to_json(vkattn::plan_text(self.ctx().caps(), p, types,
                                                  plan_options(variant, strict, splits, tile_keys, rows))));
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
  m.def("check_bdpa_index", &check_bdpa_index, "index"_a, py::kw_only(), "num_basis"_a, "num_residual"_a,
        "kv_len"_a = py::none(), "rotary_dim"_a = 0, "rope_positions"_a = 0,
        "Raises ValueError naming the first entry of a BDPA index [B, C, 3] a sequence reads that is past the "
        "basis, the residual pool or (with rotary_dim) the RoPE tables");
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
           "v_scale"_a = py::none(), "kv_dtype"_a = py::none(), "quant_group"_a = 0, "hot_k"_a = py::none(),
           "hot_v"_a = py::none(), "cold_layout"_a = "contiguous", "splits"_a = 0, "tile_keys"_a = 0, "rows"_a = 0,
           "Text attention: q [B, S, H, D]; k, v [B, C, Hkv, D] (or the paged pool with page_table), or with "
           "kv_dtype 'i8'/'i4' quantized words and float16 k_scale/v_scale as quantize_kv returns; with "
           "layout='tiered', k, v are the cold tier (laid out as cold_layout) and hot_k, hot_v the float16 hot "
           "ring [B, hot_window, Hkv, D]; returns [B, S, H, D]")
      .def("quantize_kv", &quantize_kv, "x"_a, py::kw_only(), "dtype"_a = "i8", "quant_group"_a = 0,
           "A float cache [N, C, Hkv, D] quantized on the GPU: (uint32 words [N, C, Hkv, packed_stride], "
           "float16 scales [N, C, Hkv] or [N, C, Hkv, ceil(D/32)] with quant_group=32)")
      .def("kv_append", &kv_append, "k"_a, "v"_a, "cache_k"_a, "cache_v"_a, py::kw_only(), "positions"_a,
           "layout"_a = "contiguous", "page_table"_a = py::none(), "k_scale"_a = py::none(), "v_scale"_a = py::none(),
           "kv_dtype"_a = py::none(), "quant_group"_a = 0, "hot_k"_a = py::none(), "hot_v"_a = py::none(),
           "cold_layout"_a = "contiguous",
           "Writes new rows k, v [B, T, Hkv, D] into a cache on the GPU, token t of sequence b at positions[b] + t "
           "(converted, quantized with kv_dtype 'i8'/'i4'); returns the cache after the write as a dict of "
           "cache_k, cache_v (and k_scale, v_scale; hot_k, hot_v for layout='tiered')")
      .def("vision_attention", &vision_attention, "q"_a, "k"_a, "v"_a, py::kw_only(), "scale"_a = py::none(),
           "layout"_a = "phd", "out_dtype"_a = py::none(), "variant"_a = py::none(), "strict"_a = false,
           "Bidirectional attention over patches: q, k, v [P, H, D] (or [H, P, D] with layout='hpd')")
      .def("pos_embed_add", &pos_embed_add, "hidden"_a, "table"_a, py::kw_only(), "patches_x"_a,
           "hidden [P, hidden] + table[0, p % patches_x] + table[1, p // patches_x], as a new array")
      .def("audio_attention", &audio_attention, "q"_a, "k"_a, "v"_a, "per_dim_scale"_a, "rel_pos"_a, py::kw_only(),
           "chunk"_a = 12, "max_past"_a = 12, "max_future"_a = 0, "logit_cap"_a = 50.0f, "scale_keys"_a = true,
           "include_past_edge"_a = false, "variant"_a = py::none(), "strict"_a = false,
           "Block-local Conformer attention: q, k, v [T, H, D]; rel_pos [P + F + 1, H, D]; per_dim_scale [D]")
      .def("bdpa_attention", &bdpa_attention, "q"_a, "basis_k"_a, "basis_v"_a, "residual_k"_a, "residual_v"_a,
           "residual_k_scale"_a, "residual_v_scale"_a, "index"_a, py::kw_only(), "rope_cos"_a = py::none(),
           "rope_sin"_a = py::none(), "causal"_a = false, "window"_a = 0, "softcap"_a = 0.0f, "scale"_a = py::none(),
           "pairing"_a = "rotate_half", "kv_len"_a = py::none(), "start_pos"_a = py::none(),
           "out_dtype"_a = py::none(), "variant"_a = py::none(), "strict"_a = false,
           "BDPA attention (vkattn/bdpa.hpp): q [B, S, H, D]; basis [N, Hkv, D]; int8 residuals [R, Hkv, D] with "
           "float32 scales [R, Hkv]; uint32 index [B, C, 3]; float32 rope_cos/rope_sin [positions, rotary_dim / 2]; "
           "returns [B, S, H, D]")
      .def("bdpa_build", &bdpa_build, "k"_a, "v"_a, "token_ids"_a, py::kw_only(), "vocab_size"_a,
           "kv_len"_a = py::none(), "basis_dtype"_a = "f32",
           "A BDPA cache built on the GPU from a contiguous pre-RoPE cache k, v [B, C, Hkv, D] and uint32 "
           "token_ids [B, C]: a dict of the arrays bdpa_attention takes, and num_basis")
      .def("plan_bdpa", &plan_bdpa, py::kw_only(), "batch"_a = 1, "seq_len"_a = 1, "heads"_a = 32, "kv_heads"_a = 8,
           "head_dim"_a = 128, "kv_len"_a = 4096, "rotary_dim"_a = 128, "q_dtype"_a = "f32", "basis_dtype"_a = "f16",
           "variant"_a = py::none(), "strict"_a = false,
           "The plan of a BDPA call on this device, as a dict, without running it")
      .def("plan_text", &plan_text, py::kw_only(), "batch"_a = 1, "seq_len"_a = 1, "heads"_a = 32, "kv_heads"_a = 8,
           "head_dim"_a = 128, "kv_len"_a = 4096, "q_dtype"_a = "f32", "kv_dtype"_a = "f16", "variant"_a = py::none(),
           "strict"_a = false, "splits"_a = 0, "tile_keys"_a = 0, "rows"_a = 0,
           "The plan of a text-attention call on this device, as a dict, without running it (splits, tile_keys "
           "and rows: tuning values, 0 the planner's)")
      .def("plan_vision", &plan_vision, py::kw_only(), "patches"_a = 2304, "heads"_a = 12, "head_dim"_a = 64,
           "dtype"_a = "f32", "layout"_a = "phd", "variant"_a = py::none(), "strict"_a = false,
           "The plan of a vision-attention call on this device, as a dict, without running it");
  py::class_<PyPageAllocator>(m, "PageAllocator",
                              "Pages of a paged KV pool handed to sequences in order of position (vkattn/kvcache.hpp)")
      .def(py::init<ArrayContext&, uint32_t, uint32_t, uint32_t, uint32_t>(), "ctx"_a, py::kw_only(), "num_pages"_a,
           "page_size"_a, "batch"_a, "max_pages"_a, py::keep_alive<1, 2>())
      .def("reserve", &PyPageAllocator::reserve, "seq"_a, "length"_a, "Sequence seq holds positions [0, length)")
      .def("release", &PyPageAllocator::release, "seq"_a, "Returns every page of sequence seq to the pool")
      .def_property_readonly("free_pages", &PyPageAllocator::free_pages)
      .def_property_readonly("table", &PyPageAllocator::table,
                             "The page table, uint32 [batch, max_pages] (0xffffffff without a page)")
      .def("check", &PyPageAllocator::check, "seq"_a, "first"_a, "count"_a,
           "Raises ValueError if a position of [first, first + count) of seq is on a page it does not hold")
      .def("check_table", &PyPageAllocator::check_table, "page_table"_a,
           "Raises ValueError if page_table holds a page where the allocator holds another or none");
}
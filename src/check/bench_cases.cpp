#include "check/bench_cases.hpp"

#include <fmt/format.h>

namespace vkattn::check {

namespace {

TextCase shape(uint32_t b, uint32_t s, uint32_t h, uint32_t hkv, uint32_t d, uint32_t kv_len, DType q, DType kv) {
  TextCase c;
  auto& p = c.params;
  p.batch = b;
  p.seq_len = s;
  p.num_heads = h;
  p.num_kv_heads = hkv;
  p.head_dim = d;
  p.kv_len = {kv_len};
  p.kv_capacity = kv_len;
  p.start_pos = {kv_len - s};
  p.causal = true;
  c.q = q;
  c.kv = kv;
  c.out = q;
  return c;
}

}  // namespace

std::vector<BenchCase> text_bench_cases() {
  std::vector<BenchCase> out;
  auto add = [&](const char* suite, const char* model, TextCase c, bool oracle) {
    c.name = fmt::format("{} {} B{} S{} H{}/{} D{} L{} {}", suite, model, c.params.batch, c.params.seq_len,
                         c.params.num_heads, c.params.num_kv_heads, c.params.head_dim, c.params.kv_len[0],
                         to_string(c.kv));
    out.push_back({suite, std::move(c), oracle});
  };
  // Decode: memory-bound; bandwidth is the figure of merit.
  for (uint32_t L : {1024u, 4096u, 16384u, 65536u})
    add("decode", "llama3-8b", shape(1, 1, 32, 8, 128, L, DType::f32, DType::f16), L <= 16384);
  add("decode", "llama3-8b", shape(8, 1, 32, 8, 128, 4096, DType::f32, DType::f16), true);
  add("decode", "llama3-8b", shape(32, 1, 32, 8, 128, 2048, DType::f16, DType::f16), false);
  add("decode", "gemma-d256", shape(1, 1, 16, 8, 256, 8192, DType::f32, DType::f16), true);
  add("decode", "mqa-d64", shape(4, 1, 32, 1, 64, 8192, DType::f32, DType::f16), true);
  // Prefill: compute-bound; TFLOP/s is the figure of merit.
  add("prefill", "llama3-8b", shape(1, 512, 32, 8, 128, 512, DType::f16, DType::f16), true);
  add("prefill", "llama3-8b", shape(1, 2048, 32, 8, 128, 2048, DType::f16, DType::f16), false);
  add("prefill", "llama3-8b", shape(1, 4096, 32, 8, 128, 4096, DType::f16, DType::f16), false);
  add("prefill", "d64", shape(1, 2048, 16, 16, 64, 2048, DType::f16, DType::f16), false);
  add("prefill", "llama3-8b", shape(1, 16384, 32, 8, 128, 16384, DType::f16, DType::f16), false);
  add("prefill", "d256", shape(1, 2048, 16, 16, 256, 2048, DType::f16, DType::f16), false);
  TextCase windowed = shape(1, 16384, 32, 8, 128, 16384, DType::f16, DType::f16);
  windowed.params.window = 4096;
  add("prefill", "llama3-8b-window4096", windowed, false);
  return out;
}

}  // namespace vkattn::check

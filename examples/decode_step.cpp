// The README's library example, built and run by the tests: one Llama-3-8B
// decode step recorded once and replayed for the next step with a new length
// read from a GPU buffer.
#include <vkattn/vkattn.hpp>

#include <cstdio>
#include <vector>

int main() try {
  vkattn::Context ctx;  // or Context(ExternalDevice{...}) to use yours
  vkattn::TextAttentionParams p;
  p.num_heads = 32;
  p.num_kv_heads = 8;
  p.head_dim = 128;
  p.kv_capacity = 4096;
  p.kv_len = {4096};  // an upper bound: the GPU buffer below holds the real length
  p.start_pos = {4095};
  p.causal = true;
  vkattn::TextAttentionTensors t;
  t.q = ctx.tensor(vkattn::DType::f32, {1, 1, 32, 128});
  t.k = ctx.tensor(vkattn::DType::f16, {1, 4096, 8, 128});
  t.v = ctx.tensor(vkattn::DType::f16, {1, 4096, 8, 128});
  t.out = ctx.tensor(vkattn::DType::f32, {1, 1, 32, 128});
  t.kv_len = ctx.tensor(vkattn::DType::u32, {1});
  t.start_pos = ctx.tensor(vkattn::DType::u32, {1});
  ctx.upload(t.q, std::vector<float>(32 * 128, 0.01f));
  ctx.upload(t.k, std::vector<uint16_t>(4096 * 8 * 128, 0x3c00));  // f16 1.0
  // Equal scores (every K row alike), so each output is the mean of the visible
  // V rows: V row j holds j % 16 (as f16), and the mean depends on kv_len.
  std::vector<uint16_t> v(4096 * 8 * 128);
  const uint16_t f16_small_ints[16] = {0x0000, 0x3c00, 0x4000, 0x4200, 0x4400, 0x4500, 0x4600, 0x4700,
                                       0x4800, 0x4880, 0x4900, 0x4980, 0x4a00, 0x4a80, 0x4b00, 0x4b80};
  for (size_t i = 0; i < v.size(); ++i) v[i] = f16_small_ints[(i / (8 * 128)) % 16];
  ctx.upload(t.v, v);

  vkattn::Recorder rec(ctx);  // or Recorder(ctx, your_command_buffer)
  auto info = vkattn::text_attention(rec, p, t);
  for (uint32_t len : {4000u, 4001u}) {  // two decode steps, one recording
    ctx.upload(t.kv_len, std::vector<uint32_t>{len});
    ctx.upload(t.start_pos, std::vector<uint32_t>{len - 1});
    rec.run();
    auto out = ctx.download_as<float>(t.out);
    double want = 0;
    for (uint32_t j = 0; j < len; ++j) want += j % 16;
    want /= len;
    std::printf("kv_len %u: %s (%s), out[0] = %.4f, expected %.4f\n", len, info.variant.c_str(), info.reason.c_str(),
                out[0], want);
    for (float o : out)
      if (o < want - 1e-3 * want || o > want + 1e-3 * want) return 1;
  }
  return vkattn::Context::validation_messages() == 0 ? 0 : 3;
} catch (const vkattn::Error& e) {
  std::fprintf(stderr, "error: %s\n", e.what());
  return 2;
}

// A program outside the vkattn tree, built against an installed vkattn (once
// through find_package, once through pkg-config): one text-attention call
// whose answer is known in closed form. With every key row equal, softmax is
// uniform and each output is the mean of the visible value rows.
#include <vkattn/vkattn.hpp>

#include <cmath>
#include <cstdio>
#include <string_view>
#include <vector>

int main() try {
  if (vkattn::version() != VKATTN_VERSION_STRING) {
    std::fprintf(stderr, "consumer: headers are %s, library is %.*s\n", VKATTN_VERSION_STRING,
                 static_cast<int>(vkattn::version().size()), vkattn::version().data());
    return 1;
  }
  constexpr uint32_t heads = 2, dim = 8, keys = 16;
  vkattn::Context ctx;
  vkattn::TextAttentionParams p;
  p.num_heads = heads;
  p.num_kv_heads = 1;
  p.head_dim = dim;
  p.kv_capacity = keys;
  p.kv_len = {keys};
  vkattn::TextAttentionTensors t;
  t.q = ctx.tensor(vkattn::DType::f32, {1, 1, heads, dim});
  t.k = ctx.tensor(vkattn::DType::f32, {1, keys, 1, dim});
  t.v = ctx.tensor(vkattn::DType::f32, {1, keys, 1, dim});
  t.out = ctx.tensor(vkattn::DType::f32, {1, 1, heads, dim});
  ctx.upload(t.q, std::vector<float>(heads * dim, 0.5f));
  ctx.upload(t.k, std::vector<float>(keys * dim, 1.0f));
  std::vector<float> v(keys * dim);
  for (uint32_t j = 0; j < keys; ++j)
    for (uint32_t d = 0; d < dim; ++d) v[j * dim + d] = static_cast<float>(j);
  ctx.upload(t.v, v);
  vkattn::Recorder rec(ctx);
  const auto info = vkattn::text_attention(rec, p, t);
  rec.run();
  const float want = (keys - 1) / 2.0f;
  for (float got : ctx.download_as<float>(t.out))
    if (std::fabs(got - want) > 1e-5f) {
      std::fprintf(stderr, "consumer: %s gave %g, expected %g\n", info.variant.c_str(), got, want);
      return 1;
    }
  std::printf("vkattn %s on %s: %s, every output %g as expected\n", VKATTN_VERSION_STRING, ctx.caps().name.c_str(),
              info.variant.c_str(), want);
  return 0;
} catch (const vkattn::Error& e) {
  std::fprintf(stderr, "consumer: %s\n", e.what());
  return 1;
}

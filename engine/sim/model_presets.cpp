#include "engine/sim/model_presets.h"

#include <fmt/core.h>
#include <fmt/format.h>

#include <numeric>

#include "engine/core/error.h"

namespace ringlab::sim {

namespace {

// A Linear(in, out) registers its weight (out x in) and then its bias (out).
void add_linear(std::vector<int64_t>& params, int64_t in, int64_t out) {
  params.push_back(in * out);
  params.push_back(out);
}

// Compute of the two larger presets, from the usual transformer estimate (Kaplan et al.,
// "Scaling Laws for Neural Language Models", 2020): training costs about 6 N FLOPs per token for
// N parameters (2 N forward, 4 N backward). Assumed: 16,384 tokens (or samples) per rank per
// step (e.g. 16 sequences of 1,024 tokens) and 125 TFLOP/s achieved, about 40% of an A100's
// 312 TFLOP/s bf16 peak. Attention's own FLOPs (~7% more at 1,024 tokens) are left out.
constexpr double kTokensPerRankStep = 16384.0;
constexpr double kAchievedFlops = 125e12;

ComputeTimes six_n_compute(int64_t params) {
  return compute_from_total(6.0 * static_cast<double>(params) * kTokensPerRankStep / kAchievedFlops);
}

const char* kSixNSource =
    "6 N FLOPs per token (Kaplan et al. 2020), 16,384 tokens per rank per step, 125 TFLOP/s "
    "achieved (~40% of an A100's bf16 peak); forward:backward = 1:2";

}  // namespace

ComputeTimes compute_from_total(double total_s) {
  ComputeTimes t;
  t.forward_s = total_s / 3.0;
  t.backward_s = total_s - t.forward_s;
  return t;
}

int64_t ModelShape::total_elements() const {
  return std::accumulate(param_elements.begin(), param_elements.end(), int64_t{0});
}

ModelShape mlp_model(int features, const std::vector<int>& hidden, int outputs) {
  std::vector<int> widths = {features};
  widths.insert(widths.end(), hidden.begin(), hidden.end());
  widths.push_back(outputs);
  ModelShape m;
  m.name = "mlp";
  for (size_t i = 0; i < widths.size(); ++i) {
    if (widths[i] < 1) throw InputError(fmt::format("MLP layer {} has width {}; every width must be >= 1", i, widths[i]));
    if (i > 0) add_linear(m.param_elements, widths[i - 1], widths[i]);
  }
  m.description = fmt::format("MLP {}", fmt::join(widths, " -> "));
  return m;
}

ModelShape seed_mlp() {
  ModelShape m = mlp_model(6, {48, 48}, 1);
  m.name = "seed";
  m.description = "the seed's MLP: Linear(6,48) Tanh Linear(48,48) Tanh Linear(48,1)";
  m.compute = compute_from_total(534e-6);
  m.compute_source =
      "PyTorch 1.13 DDP (gloo), 1 rank, batch 32: ~534 us per whole step measured on this kind of "
      "machine (docs/reference-measurements.md); ringlab's own engine takes about 17 us for it (docs/speed.md: "
      "compute alone, `ringlab run --report` gives yours): --compute-ms 0.017 models ringlab's run, or pass your own "
      "measurement";
  return m;
}

ModelShape mlp_25m() {
  ModelShape m;
  m.name = "25M";
  m.description = "a 25 M-parameter stack: 24 x Linear(1024, 1024) (about ResNet-50's size)";
  for (int layer = 0; layer < 24; ++layer) add_linear(m.param_elements, 1024, 1024);
  m.compute = six_n_compute(m.total_elements());
  m.compute_source = kSixNSource;
  return m;
}

// GPT-2 small (Radford et al. 2019; the shapes of Hugging Face's GPT2LMHeadModel, whose output
// layer shares the token embedding): vocabulary 50,257, context 1,024, width 768, 12 blocks.
ModelShape gpt2_small_124m() {
  constexpr int64_t vocab = 50257, context = 1024, d = 768, blocks = 12;
  ModelShape m;
  m.name = "124M";
  m.description = "GPT-2 small: 12 blocks of width 768, vocabulary 50,257, tied output layer";
  auto& p = m.param_elements;
  p.push_back(vocab * d);    // wte: token embedding (also the output layer)
  p.push_back(context * d);  // wpe: position embedding
  for (int64_t b = 0; b < blocks; ++b) {
    p.push_back(d);                  // ln_1 weight
    p.push_back(d);                  // ln_1 bias
    add_linear(p, d, 3 * d);         // attn.c_attn: query, key and value in one
    add_linear(p, d, d);             // attn.c_proj
    p.push_back(d);                  // ln_2 weight
    p.push_back(d);                  // ln_2 bias
    add_linear(p, d, 4 * d);         // mlp.c_fc
    add_linear(p, 4 * d, d);         // mlp.c_proj
  }
  p.push_back(d);  // ln_f weight
  p.push_back(d);  // ln_f bias
  m.compute = six_n_compute(m.total_elements());
  m.compute_source = kSixNSource;
  return m;
}

const std::vector<std::string>& model_preset_names() {
  static const std::vector<std::string> names = {"seed", "25M", "124M"};
  return names;
}

ModelShape model_preset(const std::string& name) {
  if (name == "seed") return seed_mlp();
  if (name == "25M" || name == "25m") return mlp_25m();
  if (name == "124M" || name == "124m") return gpt2_small_124m();
  throw InputError(fmt::format("unknown model '{}' (known: seed, 25M, 124M)", name));
}

}  // namespace ringlab::sim

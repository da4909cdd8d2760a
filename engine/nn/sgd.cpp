#include "engine/nn/sgd.h"

namespace ringlab::nn {

Sgd::Sgd(double lr, double momentum, double weight_decay)
    : lr_(static_cast<float>(lr)), momentum_(static_cast<float>(momentum)),
      weight_decay_(static_cast<float>(weight_decay)) {}

// The settings are copied into locals and each case gets a loop of its own: read through
// `this` inside one loop, they had to be reloaded for every element (the parameters might have
// aliased them) and the loop stayed scalar. The arithmetic per element is unchanged.
void Sgd::step(std::span<float> params, std::span<const float> grads) {
  const size_t n = params.size();
  const float alpha = -lr_, decay = weight_decay_, momentum = momentum_;
  float* __restrict p = params.data();
  const float* __restrict g = grads.data();
  if (momentum == 0.0f) {
    if (decay == 0.0f) {
      for (size_t i = 0; i < n; ++i) p[i] = p[i] + alpha * g[i];
    } else {
      for (size_t i = 0; i < n; ++i) p[i] = p[i] + alpha * (g[i] + decay * p[i]);
    }
    return;
  }
  const bool first = buffer_.size() != n;
  if (first) buffer_.resize(n);
  float* __restrict b = buffer_.data();
  for (size_t i = 0; i < n; ++i) {
    const float gi = decay == 0.0f ? g[i] : g[i] + decay * p[i];
    b[i] = first ? gi : momentum * b[i] + gi;
    p[i] = p[i] + alpha * b[i];
  }
}

}  // namespace ringlab::nn

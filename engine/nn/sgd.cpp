#include "engine/nn/sgd.h"

namespace ringlab::nn {

Sgd::Sgd(double lr, double momentum, double weight_decay)
    : lr_(static_cast<float>(lr)), momentum_(static_cast<float>(momentum)),
      weight_decay_(static_cast<float>(weight_decay)) {}

void Sgd::step(std::span<float> params, std::span<const float> grads) {
  const size_t n = params.size();
  const float alpha = -lr_;
  const bool first = momentum_ != 0.0f && buffer_.size() != n;
  if (first) buffer_.assign(grads.begin(), grads.end());
  for (size_t i = 0; i < n; ++i) {
    float g = grads[i];
    if (weight_decay_ != 0.0f) g = g + weight_decay_ * params[i];
    if (momentum_ != 0.0f) {
      g = first ? g : momentum_ * buffer_[i] + g;
      buffer_[i] = g;
    }
    params[i] = params[i] + alpha * g;
  }
}

}  // namespace ringlab::nn

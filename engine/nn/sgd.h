#pragma once
// torch.optim.SGD (dampening 0, no Nesterov):
//   g = grad + weight_decay * p
//   b = g on the first step, then b = momentum * b + g      (only when momentum > 0)
//   p = p - lr * b   (or lr * g without momentum)
#include <span>
#include <vector>

namespace ringlab::nn {

class Sgd {
 public:
  Sgd(double lr, double momentum = 0.0, double weight_decay = 0.0);

  void step(std::span<float> params, std::span<const float> grads);

  // For checkpoints: the momentum buffer (empty until the first step with momentum).
  const std::vector<float>& momentum_buffer() const { return buffer_; }
  void set_momentum_buffer(std::vector<float> b) { buffer_ = std::move(b); }
  double lr() const { return lr_; }

 private:
  float lr_, momentum_, weight_decay_;
  std::vector<float> buffer_;
};

}  // namespace ringlab::nn

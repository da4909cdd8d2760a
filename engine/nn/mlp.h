#pragma once
// torch.nn.Sequential(Linear, Tanh, Linear, Tanh, ..., Linear): the course's regression MLP
// (6 -> 48 -> 48 -> 1 by default). Backward is written out by hand, layer by layer, and reports
// each parameter the moment its gradient is complete, last layer first: the hook DDP uses to
// start all-reducing a bucket while the rest of backward is still running.
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "engine/nn/linear.h"

namespace ringlab {
class Generator;
}

namespace ringlab::nn {

// Where one parameter lives inside the flat buffers (PyTorch's parameters() order).
struct ParameterView {
  std::string name;  // "0.weight", "0.bias", "2.weight", ... as in the Sequential's state_dict
  size_t offset = 0;
  size_t numel = 0;
  int64_t rows = 0;  // out features (weights) or numel (biases)
  int64_t cols = 0;  // in features (weights) or 1 (biases)
};

using GradReadyFn = std::function<void(int parameter_index)>;

class Mlp {
 public:
  Mlp(int in_features, std::vector<int> hidden, int out_features);

  // PyTorch's construction order: each Linear draws its weight, then its bias.
  void reset_parameters(Generator& gen);

  // All parameters in one flat buffer, and all gradients in another of the same layout, so a
  // DDP bucket is a contiguous range of both.
  std::span<float> parameters() { return params_; }
  std::span<const float> parameters() const { return params_; }
  std::span<float> gradients() { return grads_; }
  std::span<const float> gradients() const { return grads_; }
  const std::vector<ParameterView>& parameter_views() const { return views_; }
  size_t num_parameters() const { return params_.size(); }
  int in_features() const { return static_cast<int>(layers_.front().in); }
  int out_features() const { return static_cast<int>(layers_.back().out); }

  // x is batch x in_features, row-major. Keeps the activations for backward.
  std::span<const float> forward(std::span<const float> x, int64_t batch);
  // Forward into `out` (evaluation); overwrites what forward kept for backward.
  void predict(std::span<const float> x, int64_t batch, std::span<float> out);
  // Accumulates d loss / d parameters into gradients(); calls ready(i) for each parameter index
  // in reverse order as soon as its gradient is final.
  void backward(std::span<const float> grad_output, const GradReadyFn& ready = {});
  void zero_grad();

 private:
  float* weight(size_t layer) { return params_.data() + views_[2 * layer].offset; }
  float* bias(size_t layer) { return params_.data() + views_[2 * layer + 1].offset; }
  void run_forward(const float* x, int64_t batch);

  std::vector<LinearShape> layers_;
  std::vector<ParameterView> views_;
  std::vector<float> params_;
  std::vector<float> grads_;
  // Activations kept for backward: acts_[0] is the input, acts_[l + 1] the output of layer l
  // (after Tanh for hidden layers, raw for the last).
  std::vector<std::vector<float>> acts_;
  std::vector<float> weight_t_;                // scratch for the transposed weight
  std::vector<float> grad_a_, grad_b_;         // scratch for the backward pass
  std::vector<float> scratch_t_;               // the transposed output gradient
  int64_t batch_ = 0;
};

}  // namespace ringlab::nn

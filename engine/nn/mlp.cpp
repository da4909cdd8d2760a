#include "engine/nn/mlp.h"

#include <algorithm>

#include <fmt/core.h>

#include "engine/core/error.h"
#include "engine/nn/tanh.h"

namespace ringlab::nn {

Mlp::Mlp(int in_features, std::vector<int> hidden, int out_features) {
  if (in_features < 1 || out_features < 1) throw InputError("an MLP needs at least one input and one output");
  std::vector<int> widths = {in_features};
  widths.insert(widths.end(), hidden.begin(), hidden.end());
  widths.push_back(out_features);
  size_t offset = 0, widest = 0;
  for (size_t l = 0; l + 1 < widths.size(); ++l) {
    const LinearShape s{widths[l], widths[l + 1]};
    layers_.push_back(s);
    // Sequential numbers its modules with the Tanh in between: Linear layers are 0, 2, 4, ...
    const std::string prefix = std::to_string(2 * l);
    views_.push_back({prefix + ".weight", offset, static_cast<size_t>(s.in * s.out), s.out, s.in});
    offset += s.in * s.out;
    views_.push_back({prefix + ".bias", offset, static_cast<size_t>(s.out), s.out, 1});
    offset += s.out;
    widest = std::max(widest, static_cast<size_t>(s.in * s.out));
  }
  params_.assign(offset, 0.0f);
  grads_.assign(offset, 0.0f);
  weight_t_.resize(widest);
  acts_.resize(layers_.size() + 1);
}

void Mlp::reset_parameters(Generator& gen) {
  for (size_t l = 0; l < layers_.size(); ++l) linear_reset_parameters(layers_[l], weight(l), bias(l), gen);
}

void Mlp::run_forward(const float* x, int64_t batch) {
  batch_ = batch;
  acts_[0].assign(x, x + batch * layers_.front().in);
  for (size_t l = 0; l < layers_.size(); ++l) {
    const LinearShape s = layers_[l];
    std::vector<float>& y = acts_[l + 1];
    y.resize(batch * s.out);
    linear_forward(s, acts_[l].data(), batch, weight(l), bias(l), weight_t_.data(), y.data());
    if (l + 1 < layers_.size()) tanh_forward(y.data(), batch * s.out, y.data());
  }
}

std::span<const float> Mlp::forward(std::span<const float> x, int64_t batch) {
  if (static_cast<int64_t>(x.size()) != batch * layers_.front().in)
    throw Error(fmt::format("Mlp::forward: input has {} values, expected {} x {}", x.size(), batch,
                            layers_.front().in));
  run_forward(x.data(), batch);
  return acts_.back();
}

void Mlp::predict(std::span<const float> x, int64_t batch, std::span<float> out) {
  std::span<const float> y = forward(x, batch);
  std::copy(y.begin(), y.end(), out.begin());
}

void Mlp::backward(std::span<const float> grad_output, const GradReadyFn& ready) {
  // Walk the layers backwards. Layer l's weight and bias gradients are final as soon as its
  // own backward is done, before any earlier layer is touched: that is when DDP may send them.
  grad_a_.assign(grad_output.begin(), grad_output.end());
  for (size_t l = layers_.size(); l-- > 0;) {
    const LinearShape s = layers_[l];
    // For hidden layers the stored activation is tanh's output: go back through Tanh first.
    if (l + 1 < layers_.size()) tanh_backward(grad_a_.data(), acts_[l + 1].data(), batch_ * s.out, grad_a_.data());
    float* dw = grads_.data() + views_[2 * l].offset;
    float* db = grads_.data() + views_[2 * l + 1].offset;
    scratch_t_.resize(batch_ * s.out);
    linear_backward_params(s, acts_[l].data(), grad_a_.data(), batch_, dw, db, scratch_t_.data());
    // PyTorch's autograd finishes the bias (a plain sum) before the weight's matrix product,
    // so its hooks see the bias first; DDP's bucket order is by parameter index either way.
    if (ready) {
      ready(static_cast<int>(2 * l + 1));
      ready(static_cast<int>(2 * l));
    }
    if (l > 0) {
      grad_b_.resize(batch_ * s.in);
      linear_backward_input(s, grad_a_.data(), batch_, weight(l), grad_b_.data());
      grad_a_.swap(grad_b_);
    }
  }
}

void Mlp::zero_grad() { std::fill(grads_.begin(), grads_.end(), 0.0f); }

}  // namespace ringlab::nn

#pragma once
// ((pred - target) ** 2).mean(), and its gradient with respect to pred.
#include <span>

namespace ringlab::nn {

// Returns the mean squared error. When grad_pred is not empty it receives
// d loss / d pred = (1/n) * (2 * (pred - target)), in PyTorch's order of operations.
float mse_loss(std::span<const float> pred, std::span<const float> target, std::span<float> grad_pred = {});

}  // namespace ringlab::nn

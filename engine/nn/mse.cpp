#include "engine/nn/mse.h"

#include "engine/core/error.h"

namespace ringlab::nn {

float mse_loss(std::span<const float> pred, std::span<const float> target, std::span<float> grad_pred) {
  if (pred.size() != target.size()) throw Error("mse_loss: prediction and target sizes differ");
  const size_t n = pred.size();
  if (n == 0) return 0.0f;
  // Accumulate in double: PyTorch's float sum is pairwise (cascade) summation, whose error is
  // far below float rounding of the mean; a double accumulator rounds to the same float.
  double sum = 0.0;
  for (size_t i = 0; i < n; ++i) {
    const float d = pred[i] - target[i];
    sum += static_cast<double>(d * d);
  }
  if (!grad_pred.empty()) {
    const float inv_n = 1.0f / static_cast<float>(n);
    for (size_t i = 0; i < n; ++i) grad_pred[i] = inv_n * (2.0f * (pred[i] - target[i]));
  }
  return static_cast<float>(sum / static_cast<double>(n));
}

}  // namespace ringlab::nn

#pragma once
// torch.utils.data.TensorDataset over (X, Y): sample i is row i of both.
#include <cstdint>
#include <span>
#include <vector>

namespace ringlab {
class Generator;
}

namespace ringlab::data {

struct TensorDataset {
  int64_t size = 0;
  int64_t x_cols = 0;
  int64_t y_cols = 0;
  std::vector<float> x;  // size x x_cols, row-major
  std::vector<float> y;  // size x y_cols

  std::span<const float> x_row(int64_t i) const { return {x.data() + i * x_cols, static_cast<size_t>(x_cols)}; }
  std::span<const float> y_row(int64_t i) const { return {y.data() + i * y_cols, static_cast<size_t>(y_cols)}; }
  // Copies the rows named by `indices` into contiguous batch buffers.
  void gather(std::span<const int64_t> indices, std::vector<float>& bx, std::vector<float>& by) const;
};

// The seed's data, drawn in the seed script's order from the global generator:
// X = randn(n, features); w = randn(features, 1); Y = X @ w + 0.1 * randn(n, 1).
TensorDataset make_regression_dataset(int64_t n, int features, Generator& gen);

}  // namespace ringlab::data

#include "engine/data/tensor_dataset.h"

#include <algorithm>

#include "engine/core/generator.h"

namespace ringlab::data {

void TensorDataset::gather(std::span<const int64_t> indices, std::vector<float>& bx,
                           std::vector<float>& by) const {
  bx.resize(indices.size() * x_cols);
  by.resize(indices.size() * y_cols);
  for (size_t k = 0; k < indices.size(); ++k) {
    const int64_t i = indices[k];
    std::copy_n(x.data() + i * x_cols, x_cols, bx.data() + k * x_cols);
    std::copy_n(y.data() + i * y_cols, y_cols, by.data() + k * y_cols);
  }
}

TensorDataset make_regression_dataset(int64_t n, int features, Generator& gen) {
  TensorDataset d;
  d.size = n;
  d.x_cols = features;
  d.y_cols = 1;
  d.x.resize(n * features);
  gen.normal_(d.x);
  std::vector<float> w(features);
  gen.normal_(w);
  std::vector<float> noise(n);
  gen.normal_(noise);
  d.y.resize(n);
  for (int64_t i = 0; i < n; ++i) {
    // X @ w: a dot product of one row with w, summed left to right in float.
    float dot = 0.0f;
    for (int j = 0; j < features; ++j) dot += d.x[i * features + j] * w[j];
    d.y[i] = dot + 0.1f * noise[i];
  }
  return d;
}

}  // namespace ringlab::data

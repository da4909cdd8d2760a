#include "engine/nn/linear.h"

#include <algorithm>
#include <cmath>
#include <span>

#include "engine/core/generator.h"
#include "engine/nn/gemm.h"

namespace ringlab::nn {

void linear_reset_parameters(LinearShape s, float* weight, float* bias, Generator& gen) {
  const float bound = 1.0f / std::sqrt(static_cast<float>(s.in));
  gen.uniform_({weight, static_cast<size_t>(s.in * s.out)}, -bound, bound);
  gen.uniform_({bias, static_cast<size_t>(s.out)}, -bound, bound);
}

// All three products go through gemm_accumulate (C += A B, row-major). Only the forward
// weight and the backward output gradient need a transpose first, both small.

void linear_forward(LinearShape s, const float* x, int64_t batch, const float* weight, const float* bias,
                    float* weight_t, float* y) {
  transpose(weight, s.out, s.in, weight_t);  // W^T: in x out
  for (int64_t b = 0; b < batch; ++b) std::copy(bias, bias + s.out, y + b * s.out);
  gemm_accumulate(batch, s.out, s.in, x, s.in, weight_t, s.out, y, s.out);  // Y += X W^T
}

void linear_backward_params(LinearShape s, const float* x, const float* dy, int64_t batch, float* dweight,
                            float* dbias, float* dy_t) {
  transpose(dy, batch, s.out, dy_t);  // dY^T: out x batch
  gemm_accumulate(s.out, s.in, batch, dy_t, batch, x, s.in, dweight, s.in);  // dW += dY^T X
  for (int64_t o = 0; o < s.out; ++o) {
    float sum = 0.0f;
    const float* row = dy_t + o * batch;
    for (int64_t b = 0; b < batch; ++b) sum += row[b];
    dbias[o] += sum;
  }
}

void linear_backward_input(LinearShape s, const float* dy, int64_t batch, const float* weight, float* dx) {
  std::fill(dx, dx + batch * s.in, 0.0f);
  gemm_accumulate(batch, s.in, s.out, dy, s.out, weight, s.in, dx, s.in);  // dX = dY W
}

}  // namespace ringlab::nn

#include "engine/nn/linear.h"

#include <algorithm>
#include <cmath>
#include <span>

#include "engine/core/generator.h"

namespace ringlab::nn {

void linear_reset_parameters(LinearShape s, float* weight, float* bias, Generator& gen) {
  const float bound = 1.0f / std::sqrt(static_cast<float>(s.in));
  gen.uniform_({weight, static_cast<size_t>(s.in * s.out)}, -bound, bound);
  gen.uniform_({bias, static_cast<size_t>(s.out)}, -bound, bound);
}

// The loops below are ordered so the innermost one walks contiguous memory without a float
// reduction in it; the compiler then vectorises them without reassociating sums. The avx2
// clone is picked at run time where the processor has it.

__attribute__((target_clones("avx2", "default")))
void linear_forward(LinearShape s, const float* x, int64_t batch, const float* weight,
                    const float* bias, float* weight_t, float* y) {
  const int64_t in = s.in, out = s.out;
  for (int64_t o = 0; o < out; ++o)
    for (int64_t i = 0; i < in; ++i) weight_t[i * out + o] = weight[o * in + i];
  for (int64_t b = 0; b < batch; ++b) {
    float* __restrict yr = y + b * out;
    const float* __restrict xr = x + b * in;
    std::copy(bias, bias + out, yr);
    for (int64_t i = 0; i < in; ++i) {
      const float xi = xr[i];
      const float* __restrict wr = weight_t + i * out;
      for (int64_t o = 0; o < out; ++o) yr[o] += xi * wr[o];
    }
  }
}

__attribute__((target_clones("avx2", "default")))
void linear_backward_params(LinearShape s, const float* x, const float* dy, int64_t batch,
                            float* dweight, float* dbias) {
  const int64_t in = s.in, out = s.out;
  for (int64_t b = 0; b < batch; ++b) {
    const float* __restrict xr = x + b * in;
    const float* __restrict dyr = dy + b * out;
    for (int64_t o = 0; o < out; ++o) {
      const float g = dyr[o];
      float* __restrict dwr = dweight + o * in;
      for (int64_t i = 0; i < in; ++i) dwr[i] += g * xr[i];
    }
    for (int64_t o = 0; o < out; ++o) dbias[o] += dyr[o];
  }
}

__attribute__((target_clones("avx2", "default")))
void linear_backward_input(LinearShape s, const float* dy, int64_t batch, const float* weight,
                           float* dx) {
  const int64_t in = s.in, out = s.out;
  std::fill(dx, dx + batch * in, 0.0f);
  for (int64_t b = 0; b < batch; ++b) {
    float* __restrict dxr = dx + b * in;
    const float* __restrict dyr = dy + b * out;
    for (int64_t o = 0; o < out; ++o) {
      const float g = dyr[o];
      const float* __restrict wr = weight + o * in;
      for (int64_t i = 0; i < in; ++i) dxr[i] += g * wr[i];
    }
  }
}

}  // namespace ringlab::nn

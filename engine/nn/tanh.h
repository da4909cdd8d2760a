#pragma once
// torch.nn.Tanh on float32 buffers.
#include <cstdint>

namespace ringlab::nn {

// y = tanh(x), elementwise. Uses glibc's vector tanhf (libmvec, < 1 ulp) where AVX2 exists.
void tanh_forward(const float* x, int64_t n, float* y);
// dx = dy * (1 - y^2), as PyTorch's tanh_backward computes it from the output.
void tanh_backward(const float* dy, const float* y, int64_t n, float* dx);

}  // namespace ringlab::nn

#pragma once
// The MLP's element-wise and reduction kernels (the matrix products are cuBLAS calls in
// cuda_mlp.cu). Every function only enqueues work on `stream`; none waits.
//
// Where the CPU engine (engine/nn) fixes an order of floating-point operations, these kernels
// keep it and use the explicitly rounded intrinsics (__fmul_rn, __fadd_rn) so nvcc cannot fuse a
// multiply and an add into one FMA: the GPU then gives the CPU's float32 results bit for bit
// wherever the inputs agree, and differences can only come from tanh and the matrix products.
#include <cuda_runtime_api.h>

#include <cstdint>

namespace ringlab::cuda {

// z[r, c] = z[r, c] + bias[c], then tanh when `apply_tanh` (a hidden layer). rows x cols.
void add_bias_activate(float* z, const float* bias, int64_t rows, int64_t cols, bool apply_tanh,
                       cudaStream_t stream);

// grad[i] = grad[i] * (1 - y[i] * y[i]): back through Tanh, from its output y.
void tanh_backward(float* grad, const float* y, int64_t n, cudaStream_t stream);

// dbias[c] += sum over rows r of grad[r, c], adding the rows in order (as the CPU does).
void accumulate_bias_grad(float* dbias, const float* grad, int64_t rows, int64_t cols, cudaStream_t stream);

// loss[0] = mean((pred - target)^2), summed in double in one block (a fixed order, so the
// result does not change from run to run); grad[i] = (1/n) * (2 * (pred[i] - target[i])).
void mse_loss(const float* pred, const float* target, int64_t n, float* grad, float* loss, cudaStream_t stream);

// torch.optim.SGD, dampening 0, no Nesterov (see engine/nn/sgd.h):
//   g = grad + weight_decay * p;  b = first ? g : momentum * b + g;  p = p + (-lr) * b
// `momentum_buffer` is only touched when momentum != 0.
void sgd_step(float* params, const float* grads, float* momentum_buffer, int64_t n, float lr, float momentum,
              float weight_decay, bool first_step, cudaStream_t stream);

// out[r, :] = src[indices[r], :] for r < rows; each row has `cols` floats.
void gather_rows(float* out, const float* src, const int64_t* indices, int64_t rows, int64_t cols,
                 cudaStream_t stream);

}  // namespace ringlab::cuda

#include "engine/cuda/mlp_kernels.h"

#include <algorithm>

#include "engine/cuda/cuda_check.h"
#include "engine/cuda/vector_ops.h"

namespace ringlab::cuda {
namespace {

constexpr int kThreads = 256;

int blocks_for(int64_t n) {
  return static_cast<int>(std::min<int64_t>((n + kThreads - 1) / kThreads, 65535));
}

// The grid-stride loop every element-wise kernel below uses.
#define RINGLAB_FOR_EACH_INDEX(i, n) \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (n); i += int64_t(gridDim.x) * blockDim.x)

__global__ void add_bias_activate_kernel(float* z, const float* bias, int64_t rows, int64_t cols, bool apply_tanh) {
  RINGLAB_FOR_EACH_INDEX(i, rows * cols) {
    const float v = __fadd_rn(z[i], bias[i % cols]);
    z[i] = apply_tanh ? tanhf(v) : v;
  }
}

__global__ void tanh_backward_kernel(float* grad, const float* y, int64_t n) {
  RINGLAB_FOR_EACH_INDEX(i, n) {
    grad[i] = __fmul_rn(grad[i], __fsub_rn(1.0f, __fmul_rn(y[i], y[i])));
  }
}

__global__ void accumulate_bias_grad_kernel(float* dbias, const float* grad, int64_t rows, int64_t cols) {
  RINGLAB_FOR_EACH_INDEX(c, cols) {
    float acc = dbias[c];
    for (int64_t r = 0; r < rows; ++r) acc = __fadd_rn(acc, grad[r * cols + c]);
    dbias[c] = acc;
  }
}

// One block: each thread sums a strided share in double, then a tree in shared memory halves
// the partial sums until thread 0 holds the total. n is a batch or the dataset: small.
__global__ void mse_loss_kernel(const float* pred, const float* target, int64_t n, float* grad, float* loss) {
  __shared__ double partial[kThreads];
  const float inv_n = 1.0f / static_cast<float>(n);
  double sum = 0.0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    const float d = __fsub_rn(pred[i], target[i]);
    sum += static_cast<double>(__fmul_rn(d, d));
    if (grad) grad[i] = __fmul_rn(inv_n, __fmul_rn(2.0f, d));
  }
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) *loss = static_cast<float>(partial[0] / static_cast<double>(n));
}

__global__ void sgd_step_kernel(float* params, const float* grads, float* buffer, int64_t n, float lr,
                                float momentum, float weight_decay, bool first_step) {
  const float alpha = -lr;
  RINGLAB_FOR_EACH_INDEX(i, n) {
    float g = grads[i];
    if (weight_decay != 0.0f) g = __fadd_rn(g, __fmul_rn(weight_decay, params[i]));
    if (momentum != 0.0f) {
      g = first_step ? g : __fadd_rn(__fmul_rn(momentum, buffer[i]), g);
      buffer[i] = g;
    }
    params[i] = __fadd_rn(params[i], __fmul_rn(alpha, g));
  }
}

__global__ void gather_rows_kernel(float* out, const float* src, const int64_t* indices, int64_t rows, int64_t cols) {
  RINGLAB_FOR_EACH_INDEX(i, rows * cols) {
    const int64_t r = i / cols, c = i % cols;
    out[i] = src[indices[r] * cols + c];
  }
}

#undef RINGLAB_FOR_EACH_INDEX

}  // namespace

void add_bias_activate(float* z, const float* bias, int64_t rows, int64_t cols, bool apply_tanh,
                       cudaStream_t stream) {
  if (rows * cols == 0) return;
  add_bias_activate_kernel<<<blocks_for(rows * cols), kThreads, 0, stream>>>(z, bias, rows, cols, apply_tanh);
  RINGLAB_CUDA_CHECK(launch_status());
}

void tanh_backward(float* grad, const float* y, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  tanh_backward_kernel<<<blocks_for(n), kThreads, 0, stream>>>(grad, y, n);
  RINGLAB_CUDA_CHECK(launch_status());
}

void accumulate_bias_grad(float* dbias, const float* grad, int64_t rows, int64_t cols, cudaStream_t stream) {
  if (cols == 0) return;
  accumulate_bias_grad_kernel<<<blocks_for(cols), kThreads, 0, stream>>>(dbias, grad, rows, cols);
  RINGLAB_CUDA_CHECK(launch_status());
}

void mse_loss(const float* pred, const float* target, int64_t n, float* grad, float* loss, cudaStream_t stream) {
  if (n == 0) {
    RINGLAB_CUDA_CHECK(cudaMemsetAsync(loss, 0, sizeof(float), stream));
    return;
  }
  mse_loss_kernel<<<1, kThreads, 0, stream>>>(pred, target, n, grad, loss);
  RINGLAB_CUDA_CHECK(launch_status());
}

void sgd_step(float* params, const float* grads, float* momentum_buffer, int64_t n, float lr, float momentum,
              float weight_decay, bool first_step, cudaStream_t stream) {
  if (n == 0) return;
  sgd_step_kernel<<<blocks_for(n), kThreads, 0, stream>>>(params, grads, momentum_buffer, n, lr, momentum,
                                                          weight_decay, first_step);
  RINGLAB_CUDA_CHECK(launch_status());
}

void gather_rows(float* out, const float* src, const int64_t* indices, int64_t rows, int64_t cols,
                 cudaStream_t stream) {
  if (rows * cols == 0) return;
  gather_rows_kernel<<<blocks_for(rows * cols), kThreads, 0, stream>>>(out, src, indices, rows, cols);
  RINGLAB_CUDA_CHECK(launch_status());
}

}  // namespace ringlab::cuda

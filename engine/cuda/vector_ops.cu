#include "engine/cuda/vector_ops.h"

#include <algorithm>

#include "engine/cuda/cuda_check.h"

namespace ringlab::cuda {
namespace {

constexpr int kThreads = 256;

// Grid-stride loops: a capped grid covers any n (even beyond 2^31 elements) without
// overflowing the launch limits.
int blocks_for(size_t n) { return static_cast<int>(std::min<size_t>((n + kThreads - 1) / kThreads, 65535)); }

__global__ void add_kernel(float* __restrict__ acc, const float* __restrict__ incoming, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    acc[i] = acc[i] + incoming[i];
}

__global__ void scale_kernel(float* __restrict__ x, float factor, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    x[i] = x[i] * factor;
}

}  // namespace

cudaError_t launch_status() {
  const cudaError_t status = cudaGetLastError();
  return status == cudaErrorNotReady ? cudaSuccess : status;
}

void add_inplace(float* acc, const float* incoming, size_t n, cudaStream_t stream) {
  if (n == 0) return;
  add_kernel<<<blocks_for(n), kThreads, 0, stream>>>(acc, incoming, n);
  RINGLAB_CUDA_CHECK(launch_status());
}

void scale_inplace(float* x, float factor, size_t n, cudaStream_t stream) {
  if (n == 0) return;
  scale_kernel<<<blocks_for(n), kThreads, 0, stream>>>(x, factor, n);
  RINGLAB_CUDA_CHECK(launch_status());
}

}  // namespace ringlab::cuda

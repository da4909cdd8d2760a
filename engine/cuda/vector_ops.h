#pragma once
// Element-wise kernels on device buffers, enqueued on a stream (nothing here waits).
// The NCCL group's reduce_add and the GPU DDP's gradient averaging use them.
#include <cuda_runtime_api.h>

#include <cstddef>

namespace ringlab::cuda {

// acc[i] += incoming[i] for i < n.
void add_inplace(float* acc, const float* incoming, size_t n, cudaStream_t stream);
// x[i] = x[i] * factor for i < n.
void scale_inplace(float* x, float factor, size_t n, cudaStream_t stream);

// The last kernel launch's status. cudaErrorNotReady (left by polling an unfinished event) is
// not a launch failure, so it reads as success here.
cudaError_t launch_status();

}  // namespace ringlab::cuda

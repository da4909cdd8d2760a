#pragma once
// One macro per GPU library: a failed return code becomes a ringlab::Error that carries the
// library's own message, the call as written, file:line and (for NCCL) the rank and collective.
//
//   RINGLAB_CUDA_CHECK(cudaMalloc(&p, bytes));
//   RINGLAB_CUBLAS_CHECK(cublasSgemm(...));
//   RINGLAB_NCCL_CHECK(ncclAllReduce(...), ErrorContext{rank, "allreduce_native", -1});
//
// NCCL note: a communicator created with blocking = 0 (ours are, so that every wait can time
// out) answers ncclInProgress while it is still working in the background. That is not a
// failure, so the NCCL macro lets it through; the caller then polls ncclCommGetAsyncError.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <string>

#include "engine/core/error.h"

namespace ringlab::cuda_detail {

inline std::string call_site(const char* call, const char* file, int line) {
  return std::string(call) + " (" + file + ":" + std::to_string(line) + ")";
}

[[noreturn]] inline void throw_cuda_error(cudaError_t code, const char* call, const char* file, int line) {
  throw Error(std::string("CUDA error ") + cudaGetErrorName(code) + ": " + cudaGetErrorString(code) +
              " in " + call_site(call, file, line));
}

[[noreturn]] inline void throw_cublas_error(cublasStatus_t code, const char* call, const char* file, int line) {
  throw Error(std::string("cuBLAS error ") + cublasGetStatusName(code) + ": " +
              cublasGetStatusString(code) + " in " + call_site(call, file, line));
}

[[noreturn]] inline void throw_nccl_error(ncclResult_t code, const ErrorContext& ctx, const char* call,
                                          const char* file, int line) {
  // ncclGetLastError holds NCCL's own explanation ("peer closed connection", ...), often the
  // only hint of which peer or transport failed.
  const char* detail = ncclGetLastError(nullptr);
  std::string what = std::string("NCCL error: ") + ncclGetErrorString(code);
  if (detail && *detail) what += std::string(" (") + detail + ")";
  throw Error(ctx, what + " in " + call_site(call, file, line));
}

}  // namespace ringlab::cuda_detail

#define RINGLAB_CUDA_CHECK(call)                                                           \
  do {                                                                                     \
    const cudaError_t ringlab_cuda_status_ = (call);                                       \
    if (ringlab_cuda_status_ != cudaSuccess)                                               \
      ::ringlab::cuda_detail::throw_cuda_error(ringlab_cuda_status_, #call, __FILE__, __LINE__); \
  } while (0)

#define RINGLAB_CUBLAS_CHECK(call)                                                           \
  do {                                                                                       \
    const cublasStatus_t ringlab_cublas_status_ = (call);                                    \
    if (ringlab_cublas_status_ != CUBLAS_STATUS_SUCCESS)                                     \
      ::ringlab::cuda_detail::throw_cublas_error(ringlab_cublas_status_, #call, __FILE__, __LINE__); \
  } while (0)

#define RINGLAB_NCCL_CHECK(call, ctx)                                                          \
  do {                                                                                         \
    const ncclResult_t ringlab_nccl_status_ = (call);                                          \
    if (ringlab_nccl_status_ != ncclSuccess && ringlab_nccl_status_ != ncclInProgress)          \
      ::ringlab::cuda_detail::throw_nccl_error(ringlab_nccl_status_, (ctx), #call, __FILE__, __LINE__); \
  } while (0)

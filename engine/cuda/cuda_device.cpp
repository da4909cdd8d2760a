#include "engine/cuda/cuda_device.h"

#include <fmt/core.h>

#include "engine/cuda/cuda_check.h"

namespace ringlab {
namespace {

// CUDA encodes versions as 1000 * major + 10 * minor: 13000 is 13.0, 12040 is 12.4.
std::string version_text(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

std::string explain_missing_driver() {
  int driver = 0, runtime = 0;
  // Both only read version numbers; with no driver installed cudaDriverGetVersion reports 0.
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  if (driver == 0) return "no CUDA device (no NVIDIA driver is installed)";
  return fmt::format("CUDA driver too old for CUDA runtime {} (driver supports {})", version_text(runtime),
                     version_text(driver));
}

}  // namespace

CudaAvailability cuda_availability() {
  CudaAvailability a;
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  // A failed query leaves the error in the runtime's per-thread slot; clear it so the next
  // unrelated CUDA call does not report it.
  cudaGetLastError();
  if (status == cudaSuccess && count > 0) {
    a.usable = true;
    a.device_count = count;
  } else if (status == cudaSuccess || status == cudaErrorNoDevice) {
    a.reason = "no CUDA device";
  } else if (status == cudaErrorInsufficientDriver) {
    a.reason = explain_missing_driver();
  } else if (status == cudaErrorStubLibrary) {
    a.reason = "no CUDA device (only the driver's stub library is installed)";
  } else {
    a.reason = fmt::format("CUDA runtime error {}: {}", cudaGetErrorName(status), cudaGetErrorString(status));
  }
  return a;
}

int select_cuda_device(int local_rank) {
  const CudaAvailability a = cuda_availability();
  if (!a.usable) throw Error("cannot use a GPU: " + a.reason);
  const int device = (local_rank < 0 ? 0 : local_rank) % a.device_count;
  RINGLAB_CUDA_CHECK(cudaSetDevice(device));
  return device;
}

std::string describe_cuda_device(int device) {
  cudaDeviceProp p{};
  RINGLAB_CUDA_CHECK(cudaGetDeviceProperties(&p, device));
  return fmt::format("{} (sm_{}{}, {} GiB)", p.name, p.major, p.minor, p.totalGlobalMem >> 30);
}

}  // namespace ringlab

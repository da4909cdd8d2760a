#pragma once
// Is there a GPU this process can use, and if not, exactly why not? The backend list, the CLI and
// the GPU tests all ask here, so "no CUDA device" reads the same everywhere.
#include <string>

namespace ringlab {

struct CudaAvailability {
  bool usable = false;
  std::string reason;  // why not, when !usable: "built without CUDA", "no CUDA device", ...
  int device_count = 0;
};

#ifdef RINGLAB_HAVE_CUDA

// Never crashes or hangs, even on a machine with no NVIDIA driver at all.
CudaAvailability cuda_availability();

// Makes device `local_rank % device count` current for the calling thread and returns its index
// (one process per GPU, as torch.device("cuda", LOCAL_RANK)). Throws Error without a device.
int select_cuda_device(int local_rank);

// "NVIDIA H200 (sm_90, 139 GiB)" for the logs.
std::string describe_cuda_device(int device);

#else

inline CudaAvailability cuda_availability() { return {false, "built without CUDA", 0}; }

#endif

}  // namespace ringlab

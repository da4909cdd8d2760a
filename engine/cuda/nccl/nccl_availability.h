#pragma once
// Can this machine run the NCCL backend with `world_size` ranks, and if not, why not?
// For the backend list, the CLI's --backend check and the GPU tests. Safe to call anywhere:
// without CUDA support built in it answers "built without CUDA".
#include "engine/cuda/cuda_device.h"

namespace ringlab {

#ifdef RINGLAB_HAVE_CUDA

// usable = false with the reason from cuda_availability() ("no CUDA device", "CUDA driver too
// old for CUDA runtime 13.0 (driver supports 12.4)", ...), or "NCCL needs one GPU per rank:
// 4 ranks but 1 device" when world_size exceeds the device count. world_size <= 0 checks only
// that one GPU exists.
CudaAvailability nccl_availability(int world_size);

#else

inline CudaAvailability nccl_availability(int /*world_size*/) { return {false, "built without CUDA", 0}; }

#endif

}  // namespace ringlab

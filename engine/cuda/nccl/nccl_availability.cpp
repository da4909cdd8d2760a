#include "engine/cuda/nccl/nccl_availability.h"

#include <fmt/core.h>

namespace ringlab {

CudaAvailability nccl_availability(int world_size) {
  CudaAvailability a = cuda_availability();
  if (a.usable && world_size > a.device_count) {
    // NCCL refuses two ranks of one communicator on the same GPU ("duplicate GPU").
    a.usable = false;
    a.reason = fmt::format("NCCL needs one GPU per rank: {} ranks but {} device{}", world_size, a.device_count,
                           a.device_count == 1 ? "" : "s");
  }
  return a;
}

}  // namespace ringlab

#pragma once
// The GPU path lives in a plugin, libringlab_cuda.so, next to the ringlab executable, loaded
// only when the NCCL backend is asked about. cuBLAS, cuBLASLt and NCCL are over 800 MB of shared
// libraries; linked into every process they cost each worker about 200 MB of memory and half a
// second of start-up, GPU or not.
#include <chrono>
#include <memory>
#include <string>

#include "engine/dist/process_group.h"
#include "engine/runtime/job_config.h"
#include "engine/runtime/trainer.h"

namespace ringlab {

class StoreClient;

struct GpuPluginApi {
  int version = 1;
  BackendInfo (*nccl_backend_info)(int world_size) = nullptr;
  std::unique_ptr<ProcessGroup> (*make_nccl_group)(StoreClient& store, int rank, int size,
                                                   std::chrono::milliseconds timeout) = nullptr;
  RankOutcome (*train)(const JobConfig& job, ProcessGroup& group, EventSink& events, const TrainerHooks& hooks,
                       const TrainingState* resume) = nullptr;
};

inline constexpr int kGpuPluginVersion = 1;
inline constexpr const char* kGpuPluginEntry = "ringlab_gpu_plugin";

// The plugin, loaded on first use; nullptr when it cannot be loaded, with the reason in `why`
// ("built without CUDA", "no CUDA device (no NVIDIA driver is installed: libcuda.so.1 not
// found)" without the driver's library, or the loader's message).
const GpuPluginApi* gpu_plugin(std::string* why = nullptr);

}  // namespace ringlab

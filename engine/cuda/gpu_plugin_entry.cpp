// The entry points of libringlab_cuda.so: what dist/gpu_plugin.cpp finds with dlsym, one per layer.
#include "engine/cuda/cuda_trainer.h"
#include "engine/dist/backends.h"
#include "engine/cuda/nccl/nccl_availability.h"
#include "engine/cuda/nccl/nccl_process_group.h"
#include "engine/dist/gpu_plugin.h"
#include "engine/rank/gpu_trainer.h"

namespace ringlab {
namespace {

BackendInfo backend_info(int world_size) {
  const CudaAvailability a = nccl_availability(world_size);
  return {"nccl", a.usable, a.reason};
}

std::unique_ptr<ProcessGroup> make_group(StoreClient& store, int rank, int size, std::chrono::milliseconds timeout) {
  NcclOptions options;
  options.timeout = timeout;
  return std::make_unique<NcclProcessGroup>(store, rank, size, options);
}

RankOutcome train(const JobConfig& job, ProcessGroup& group, EventSink& events, const TrainerHooks& hooks,
                  const TrainingState* resume) {
  auto* nccl = dynamic_cast<NcclProcessGroup*>(&group);
  if (!nccl) throw Error("the GPU rank loop needs an NCCL process group");
  return train_rank_cuda(job, *nccl, events, hooks, resume);
}

const GpuBackendApi kBackend{kGpuPluginVersion, &backend_info, &make_group};
const GpuTrainerApi kTrainer{kGpuPluginVersion, &train};

}  // namespace
}  // namespace ringlab

extern "C" __attribute__((visibility("default"))) const void* ringlab_gpu_backend() { return &ringlab::kBackend; }
extern "C" __attribute__((visibility("default"))) const void* ringlab_gpu_trainer() { return &ringlab::kTrainer; }

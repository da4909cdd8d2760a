#pragma once
// The GPU rank loop, from the GPU plugin (see dist/gpu_plugin.h for why it is a plugin).
#include <string>

#include "engine/dist/gpu_plugin.h"
#include "engine/job/job_config.h"
#include "engine/rank/trainer.h"

namespace ringlab {

struct GpuTrainerApi {
  int version = kGpuPluginVersion;
  RankOutcome (*train)(const JobConfig& job, ProcessGroup& group, EventSink& events, const TrainerHooks& hooks,
                       const TrainingState* resume) = nullptr;
};
inline constexpr const char* kGpuTrainerEntry = "ringlab_gpu_trainer";

// The trainer half of the plugin; nullptr with the reason in `why` when it cannot be loaded.
inline const GpuTrainerApi* gpu_trainer(std::string* why = nullptr) {
  return gpu_plugin_api<GpuTrainerApi>(kGpuTrainerEntry, why);
}

}  // namespace ringlab

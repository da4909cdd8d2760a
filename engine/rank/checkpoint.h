#pragma once
// Training checkpoints: the model, the optimizer's momentum, and where in the run they belong.
// Written as an OutputFile (a temporary file, flushed and renamed over the target; mode 0600), so
// a crash or a full disk never destroys the last good checkpoint; a checksum makes a corrupt or
// truncated file refuse to load.
#include <cstdint>
#include <string>

#include "engine/job/job_config.h"
#include "engine/rank/trainer.h"

namespace ringlab {

// Far above any model ringlab trains (the seed's has 2,737 parameters), and low enough that a
// forged length or a device file cannot make the loader allocate or read without end. A run
// that needs checkpoints (restarts, live changes) refuses a model whose checkpoint would be
// bigger (see run_limits.h).
inline constexpr uint64_t kMaxCheckpointBytes = uint64_t{2} << 30;

struct Checkpoint {
  JobConfig job;          // the job that wrote it (world size, lr, ...)
  TrainingState state;
};

void save_checkpoint(const Checkpoint& checkpoint, const std::string& path);
// Throws InputError naming the file and what is wrong (missing, truncated, bad checksum, ...).
Checkpoint load_checkpoint(const std::string& path);

}  // namespace ringlab

#pragma once
// Training checkpoints: the model, the optimizer's momentum, and where in the run they belong.
// Written as an OutputFile (a temporary file, flushed and renamed over the target; mode 0600), so
// a crash or a full disk never destroys the last good checkpoint; a checksum makes a corrupt or
// truncated file refuse to load.
#include <string>

#include "engine/runtime/job_config.h"
#include "engine/runtime/trainer.h"

namespace ringlab {

struct Checkpoint {
  JobConfig job;          // the job that wrote it (world size, lr, ...)
  TrainingState state;
};

void save_checkpoint(const Checkpoint& checkpoint, const std::string& path);
// Throws InputError naming the file and what is wrong (missing, truncated, bad checksum, ...).
Checkpoint load_checkpoint(const std::string& path);

}  // namespace ringlab

#pragma once
// `ringlab worker`: one rank of a run. Reads torchrun's (or mpirun's) environment, joins the
// rendezvous store and the process group, trains, and streams events to the controller.
#include <string>

#include "engine/job/job_config.h"

namespace ringlab {

struct WorkerOptions {
  // Driven by the app: honour the controller's step-through gate before every ring step and
  // its stop requests at the step boundaries the ranks vote at (stop, live change).
  bool interactive = false;
  // Driven by `ringlab run`: vote about every 50 ms whether to stop (StepVotes), so that the
  // controller can end the run at a step boundary, every rank's results in. Left out of runs
  // whose ranks do not meet at every boundary (see stop_votes_fit in fault_plan.h).
  bool stop_votes = false;
  std::string checkpoint_in;   // resume from this checkpoint
  std::string checkpoint_out;  // rank 0 writes the state here when stopped at a step boundary
  std::string epoch_checkpoint;  // rank 0 checkpoints here at every epoch boundary (restarts)
};

// Returns the process exit code; failures are reported on stderr and as an Error event.
int run_worker(JobConfig job, const WorkerOptions& options);

// Store keys shared by the controller and the workers.
namespace store_keys {
inline constexpr const char* kGateReleased = "ringlab/gate_released";  // ring steps allowed so far
inline constexpr const char* kGateMode = "ringlab/gate_mode";          // {1}: gated, {0}: free
inline constexpr const char* kStop = "ringlab/stop";                   // stop at the next step boundary:
inline constexpr uint8_t kStopForChange = 1;  // ... and go on with another set of workers (rank 0 checkpoints)
inline constexpr uint8_t kStopToEnd = 2;      // ... and end the run
}  // namespace store_keys

}  // namespace ringlab

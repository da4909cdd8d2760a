#pragma once
// What one rank does: the seed's ddp_cpu.py, generalised to any world size. Builds the data and
// the model from the seed exactly as PyTorch would, wraps the model in DDP, runs the direct
// all-reduce demo, then trains with a DistributedSampler, reporting everything as events.
// The loop is written once, over a Replica (rank/replica.h); train_rank runs it on the CPU, the
// GPU plugin on the rank's GPU.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/dist/process_group.h"
#include "engine/events/event.h"
#include "engine/job/job_config.h"

namespace ringlab {

// Where a run resumes (live world-size change, restart): the model and optimizer state after
// `steps_done` optimizer steps, at the start of epoch `epoch`, batch `batch`.
struct TrainingState {
  int epoch = 0;
  int64_t batch = 0;       // batches already done in `epoch` (at the old world size)
  int64_t steps_done = 0;
  std::vector<float> parameters;
  std::vector<float> momentum;
};

class FlightRecorder;
namespace nn { class Mlp; }
namespace data { struct TensorDataset; }

struct TrainerHooks {
  std::function<void(RingPhase, int ring_step)> before_ring_step;  // gated mode
  // Gated mode: how long this rank has waited at the step-through gate so far (ns). A class
  // holds a step for minutes; that is not the step's training time.
  std::function<int64_t()> held_ns;
  // Asked at every step boundary: return true to stop there (live change); the state is then
  // left in RankOutcome::stopped_state.
  std::function<bool(int64_t step)> stop_at_step_boundary;
  // Called on rank 0 at the end of every epoch with the state to resume from (restarts).
  std::function<void(const TrainingState&)> epoch_checkpoint;
  // The "drop" fault: close this rank's connections to its peers (the worker knows which).
  std::function<void()> drop_connections;
  FlightRecorder* recorder = nullptr;
  // Whether RankOutcome keeps every epoch's shard and every step's loss (tests compare them).
  // A worker reports both as events instead: kept, a 100,000-step run would hold ~25 MB of
  // indices per rank for nothing.
  bool keep_history = true;
};

struct RankOutcome {
  int64_t batches_per_epoch = 0;
  std::vector<float> demo_input, demo_output;
  std::vector<std::vector<int64_t>> shards;  // per epoch
  std::vector<double> step_loss;
  std::vector<double> epoch_mse;             // filled on rank 0
  int64_t steps = 0;
  double train_seconds = 0.0;                // the training loop, without the per-epoch evaluation
  double us_per_step = 0.0;
  std::vector<float> final_parameters;
  bool stopped = false;
  TrainingState stopped_state;
};

RankOutcome train_rank(const JobConfig& job, ProcessGroup& group, EventSink& events,
                       const TrainerHooks& hooks = {}, const TrainingState* resume = nullptr);

// Fills in how many steps this attempt trained and how long they took: at the end, or where the
// rank stopped (a stopped run reports its steps like a finished one).
inline void count_steps(RankOutcome& out, int64_t steps, int64_t train_ns) {
  out.steps = steps;
  out.train_seconds = static_cast<double>(train_ns) * 1e-9;
  out.us_per_step = steps > 0 ? out.train_seconds * 1e6 / static_cast<double>(steps) : 0.0;
}

// The whole dataset's MSE after an epoch, as the seed computes it in one forward pass, but in
// blocks of `block_rows` rows (a multiple of 8), so that the activations fit in memory however
// large the dataset; the result is the same to the last bit as one pass.
double whole_dataset_mse(nn::Mlp& model, const data::TensorDataset& dataset, int64_t block_rows);
// Rows per block of that evaluation: 64 MB of activations, a multiple of 8.
int64_t eval_block_rows(const JobConfig& job);

}  // namespace ringlab

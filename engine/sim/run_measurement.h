#pragma once
// What a real training run measured, read back for the cost models: the job from its
// `ringlab run --report` file, and each step's times from its `--trace` Chrome trace.
//
// A step of the seed's training loop on one rank (engine/rank/trainer.cpp) looks like this:
//
//   |-- step -----------------------------------------------------------------------------|
//   | batch, forward | backward ... bucket ready | waiting for the all-reduce |  optimizer  |
//   |<- before ----->|<- backward compute ------>|<- exposed wait ----------->|<- after --->|
//                                                 [ all-reduce on DDP's thread ]
//
// The Backward span holds DDP's final wait for the buckets, so the compute inside it ends at its
// last "bucket ready" mark, not at the span's end. before + backward compute + after is the
// step's measured compute; the exposed wait is what communication cost the step. It is a little
// longer than the collective itself: the DDP thread has to wake up to start it, and the training
// thread to see it done. A collective's duration includes DDP's collective check (one small
// exchange with the ring neighbour) when the run had it on.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/events/event.h"
#include "engine/sim/model_presets.h"

namespace ringlab::sim {

// The fields of a `ringlab run --report` file the models need.
struct RunReport {
  std::string origin;  // the file it came from
  bool ok = false;
  int64_t world_size = 0;
  std::string backend;
  std::string algorithm;  // "ring" (ringlab's ring) or "native" (the backend's own all-reduce)
  std::vector<int> hidden;
  int64_t bucket_cap_kb = -1;    // -1: PyTorch's defaults
  int64_t first_bucket_kb = -1;  // -1: PyTorch's 1 MiB (absent from older reports)
  int64_t steps = 0;
  double us_per_step = 0;  // mean over the training loop, as the run printed it
};

// Both throw InputError naming the origin and the field that is missing or wrong.
RunReport parse_run_report(const std::string& text, const std::string& origin);
RunReport load_run_report(const std::string& path);

// The seed's MLP as the report describes it: 6 features, the hidden widths, 1 output.
ModelShape model_of_report(const RunReport& report);

// One training step on one rank, seconds.
struct StepSample {
  int rank = 0;
  int64_t step = 0;
  double step_s = 0;              // the whole step
  double before_backward_s = 0;   // step start to backward start: batch, forward, loss
  double backward_compute_s = 0;  // backward start to its last bucket ready
  double exposed_wait_s = 0;      // last bucket ready to backward end: waiting for the buckets
  double after_s = 0;             // backward end to step end: the optimizer
  double comm_s = 0;              // sum of the step's gradient all-reduce durations
  int64_t comm_bytes = 0;         // the bytes those all-reduces summed
  int collectives = 0;
};

// Every step of every rank that all-reduced gradients, in (rank, step) order. Collectives and
// bucket marks belong to the step whose span holds them; a step without a bucket ready mark
// (gradient accumulation's no_sync, a joined rank) is left out. Throws InputError naming the
// origin when no such step is found.
std::vector<StepSample> step_samples(const std::vector<Event>& events, const std::string& origin);

}  // namespace ringlab::sim

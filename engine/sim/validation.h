#pragma once
// Checking the cost models against this machine: does a link calibrated from one part of a
// measurement predict the rest, and a real DDP run's step time?
//
// All-reduce. A bench sweep (sizes in increasing order) is split in two: the 1st, 3rd, 5th ...
// sizes are fitted (calibration.h: least squares for alpha and an effective beta), the 2nd, 4th
// ... are predicted from that fit and compared with what was measured there. Predicting the
// points a line was fitted to would mostly test the least-squares arithmetic; predicting sizes
// the fit never saw tests the model's shape (latency + bytes x per-byte cost). The link is
// fitted per backend, per world size and per algorithm: alpha also absorbs what the formula
// does not name (a scheduler's wake-up, a progress thread, oversubscribed cores), so a link
// fitted at p = 2 is not claimed to predict p = 4.
//
// DDP step. The run's own compute is measured (run_measurement.h); the model adds the
// calibrated all-reduce of each bucket and the overlap rules of ddp_step_model.h. What is
// predicted is therefore only the communication and how it overlaps: the claim under test.
//
// Noise. Each measured value is the median of repeats (several bench sweeps, several runs), each
// repeat itself a median over iterations or steps. On a shared machine a repeat can land in a
// different regime (a small loopback all-reduce takes ~0.1 ms while the cores are free and 4-8
// ms while every wake-up waits for a time slice), so a median of five can be three against two.
// A row is judged only when at least two thirds of its repeats lie within the tolerance of their
// median, and so do those of every fitted size (a line through medians of different regimes
// predicts nothing); otherwise the measurement cannot confirm or refute a prediction to that
// tolerance: the row is "noisy", not judged, and says so.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/sim/bench_file.h"
#include "engine/sim/calibration.h"
#include "engine/sim/ddp_step_model.h"
#include "engine/sim/run_measurement.h"

namespace ringlab::sim {

// Repeated measurements of one quantity.
struct Repeated {
  std::vector<double> values;
  double median = 0;
  double spread = 0;  // median absolute deviation / median (for display); 0 for a single value
};
// Throws InputError for no values or a value that is not finite and > 0.
Repeated summarize_repeats(std::vector<double> values);

// One backend, world size and algorithm, swept once or more: each size's time over the sweeps.
struct BenchSeries {
  std::string backend;
  int64_t world_size = 0;
  std::string algorithm;  // "ring" or "native", as the bench names them
  std::vector<double> bytes;       // increasing
  std::vector<Repeated> seconds;   // per size
};
// Throws InputError naming the file when the files disagree on backend or world size, a file
// lacks the algorithm, or the files do not cover the same sizes.
BenchSeries merge_bench_files(const std::vector<BenchFile>& files, const std::vector<std::string>& origins,
                              const std::string& algorithm);

enum class Verdict {
  Fitted,  // the fit saw this point: shown, not judged
  Within,  // |predicted / measured - 1| <= tolerance
  Beyond,
  Noisy,   // fewer than two thirds of the repeats within the tolerance of their median
  Shown,   // a diagnostic, not a claim: shown, not judged
};
const char* to_string(Verdict verdict);  // "fitted", "within", "BEYOND", "noisy", "shown"
Verdict judge(double predicted_s, const Repeated& measured, double tolerance);
// How many repeats lie within the tolerance of their median (the median's own among them), and
// whether that is at least two thirds of them.
int agreeing_repeats(const Repeated& measured, double tolerance);
bool reproducible(const Repeated& measured, double tolerance);

struct ComparisonRow {
  std::string quantity;  // "all-reduce", "DDP step", "DDP all-reduce"
  double bytes = 0;
  double predicted_s = 0;
  Repeated measured;
  double ratio = 0;  // predicted / measured median
  Verdict verdict = Verdict::Fitted;
};

struct AllreduceValidation {
  BenchSeries series;
  Calibration calibration;  // fitted to the 1st, 3rd, ... sizes
  bool reproducible_fit = true;  // every fitted size's repeats agree (see Noise above)
  std::vector<ComparisonRow> rows;
};
// Throws InputError for fewer than 4 sizes (2 to fit, at least 1 to predict) or a tolerance
// that is not > 0.
AllreduceValidation validate_allreduce(const BenchSeries& series, double tolerance);

struct RunMeasurement {
  RunReport report;
  std::vector<StepSample> steps;
};

struct DdpValidation {
  ModelShape model;
  ComputeTimes compute;  // medians over every rank's steps of every run
  DdpStepPrediction prediction;
  ComparisonRow step;       // the whole step: the claim under test
  // A step's gradient all-reduces against the collectives' measured durations. Shown, not
  // judged: a DDP collective also holds what a bench all-reduce has not (DDP's collective check,
  // the hand-off to DDP's communication thread), so it tells how much of a step's error is there.
  ComparisonRow allreduce;
  Repeated exposed_wait;    // what communication cost the step, measured
  int64_t samples = 0;      // steps, over ranks and runs
};
// The step predicted with the link `calibrated` fitted, which must come from a bench of the runs'
// backend, world size and all-reduce algorithm. Throws InputError when it does not, when the
// runs disagree on backend, world size, algorithm or model, when a run failed, or when the
// model's gradient bytes differ from the bytes the trace's buckets summed.
DdpValidation validate_ddp_step(const std::vector<RunMeasurement>& runs, const AllreduceValidation& calibrated,
                                double tolerance);

}  // namespace ringlab::sim

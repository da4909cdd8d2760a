#pragma once
// The live run's own all-reduces as calibration data: the Scale view puts them on the same axes
// as the models and, once the run has used at least two message sizes, fits a link to them.
//
// One size is not enough. Every point of one size says t = a + b n for the same n: any latency a
// and any per-byte cost b on that line explain it equally well. The seed's model is a single
// 10.7 KiB bucket, so a default run gives one size; a bucket cap of a few KB splits the gradient
// into buckets of different sizes, and then the line through them separates alpha from beta.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/view_model/collective_log.h"
#include "engine/sim/calibration.h"
#include "engine/sim/cost_models.h"

namespace ringlab::sim {

// One gradient all-reduce the live run recorded.
struct MeasuredAllreduce {
  int generation = 0;
  int64_t world_size = 0;
  std::string algorithm;  // "ring" (ringlab's own) or "native" (the backend's)
  double bytes = 0;
  double seconds = 0;     // from the last rank's arrival to the last rank's finish
};

// Every complete gradient all-reduce in the log with at least 2 ranks and 1 byte, oldest first.
// Left out: the broadcast at start-up; the seed's [1, 2, 3] demo, the first collective of a
// freshly connected group, whose time measures the connections warming up more than the link;
// and step-through all-reduces, whose pace is the teacher's.
//
// The time counts from the moment the last rank arrived: a rank that enters early only waits for
// the others (on a busy machine, for the scheduler), which says nothing about the link. The ring
// view's footer shows the slowest rank's own begin..end instead, so it can read a little longer.
std::vector<MeasuredAllreduce> measured_allreduces(const view_model::CollectiveLog& log);

struct MeasuredSize {
  double bytes = 0;
  double median_s = 0;  // the median resists the outliers of a shared, busy machine
  int samples = 0;
};

struct LiveCalibration {
  int generation = 0;
  int64_t world_size = 0;          // 0: nothing measured yet
  std::string algorithm;           // the run's: "ring" or "native"
  std::vector<MeasuredSize> sizes; // one per distinct size, ascending
  bool fitted = false;             // two sizes or more: `calibration` holds the fitted link
  Calibration calibration;         // alpha and an effective beta (the reduction folded in)

  bool any() const { return world_size >= 2 && !sizes.empty(); }
  // A fit worth scaling up: both a latency and a bandwidth were seen. When the larger messages
  // were not slower (all of them far below where bandwidth matters, or noise larger than the
  // difference) the fit pins beta at 0, an infinitely fast link, which would only mislead.
  bool usable() const {
    return fitted && calibration.link.alpha_s > 0 && calibration.link.beta_s_per_byte > 0;
  }
};

// The newest generation's points (one world size and one algorithm, as a fit needs), their
// median per size and, from two sizes on, a fit of the ring model to the medians (the backend's
// own all-reduce is modelled as a ring too, as calibrate_bench_file does).
LiveCalibration calibrate_live(const std::vector<MeasuredAllreduce>& measured);

// Each measured size against a link's ring model at the run's own world size.
struct MeasuredVsModel {
  double bytes = 0;
  double measured_s = 0;
  double model_s = 0;
  double ratio = 0;  // measured / model
};
std::vector<MeasuredVsModel> compare_with_model(const LiveCalibration& live, const LinkParams& link);

}  // namespace ringlab::sim

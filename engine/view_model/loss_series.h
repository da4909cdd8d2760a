#pragma once
// The training curves of one run: every rank's local loss per step, the whole-dataset MSE per
// epoch, and a marker wherever the world changed size or backend while training.
#include <cstdint>
#include <map>
#include <span>
#include <optional>
#include <string>
#include <vector>

#include "engine/job/job_config.h"
#include "engine/events/event.h"

namespace ringlab::view_model {

struct LossPoint {
  double step = 0;  // global step, continued across live world changes
  double loss = 0;
};

struct EpochPoint {
  int epoch = 0;
  double step = 0;  // the step after which the epoch ended
  double mse = 0;
};

struct WorldChange {
  double step = 0;  // between the last step of the old world and the first of the new
  int world_size = 0;
  std::string backend;
};

// The extent of every point, kept up to date as points arrive so a view never scans them all.
struct LossExtent {
  bool any = false;
  double x0 = 0, x1 = 0;
  double y0 = 0, y1 = 0;
  double y0_positive = 0;  // the smallest loss above zero, for a log axis (0 when none)
  void take(double x, double y);
};

struct LossSeries {
  std::string label;  // "4 ranks, gloo, ring, lr 0.03" (a name given to it, or the job's description)
  // The job it ran, when the label is its description: the app words it in its own language.
  std::optional<JobConfig> job;
  LossExtent extent;
  std::vector<std::vector<LossPoint>> rank_loss;  // rank_loss[r], in step order
  std::vector<EpochPoint> epoch_mse;
  std::vector<LossPoint> mse_curve;  // the same MSE values as (step, mse), for plotting
  std::vector<WorldChange> changes;
  // epoch_starts[k]: the first step of epoch k, as the ranks' steps said; the epochs' ends when
  // no MSE marks them (a PyTorch script need not report one).
  std::vector<double> epoch_starts;
  double last_step = -1;

  bool empty() const;
  // The extent of every point; false when there is none.
  bool bounds(double& x0, double& x1, double& y0, double& y1) const;
  // Where a step falls in epochs, as the step axis has it (x = s is where step s begins, and an
  // epoch's MSE sits at the steps done by its end): epoch k (0-based) begins at step
  // epoch_mse[k-1].step (0 for the first) and ends at epoch_mse[k].step, so its MSE sits at k + 1
  // and "x in epochs" relabels the plot without moving a point (the MSE sat half a step late, at
  // 1.5 and 2.5 for a run of 2 epochs of 2 steps). Without MSE, the epochs' first steps say it;
  // steps when nothing does.
  double epoch_of_step(double step) const;
};

class LossSeriesBuilder {
 public:
  // `world_size` / `backend`: the generation's, for the change marker (0 / "" when unknown).
  void consume(const Event& event, int generation, int world_size, const std::string& backend);
  void clear();
  void set_label(std::string label) {
    series_.label = std::move(label);
    series_.job.reset();
  }
  void set_job(const JobConfig& job) {
    series_.label = job.describe();
    series_.job = job;
  }
  const LossSeries& series() const { return series_; }

 private:
  double step_of(const Event& event, int generation, int world_size, const std::string& backend);

  LossSeries series_;
  std::map<int, double> step_offset_;      // per generation
  std::map<int, double> last_step_of_;     // per generation, after the offset
  int first_generation_ = -1;
};

// At most two points (the lowest and the highest) per bucket of x in [x0, x1], keeping the
// neighbours just outside the range so lines reach the edges. `points` must be sorted by step.
std::vector<LossPoint> decimate(std::span<const LossPoint> points, double x0, double x1, int buckets);

// One pixel column of a dense curve: the steps it spans and the lowest and highest finite loss
// among them. A band through these ranges looks like the zig-zag line through every point
// (which fills each column from its lowest to its highest point anyway), and a software
// renderer draws it several times faster: two triangles per column, each filling whole blocks
// of pixels, instead of four thin diagonal ones.
struct LossRange {
  double step0 = 0, step1 = 0;  // the first and last step in the column
  double lo = 0, hi = 0;
};

// The ranges of the buckets of x in [x0, x1] that hold a finite point, in order; like decimate,
// the neighbours just outside the range are kept (each as a column of its own), so the band
// reaches the edges. `points` must be sorted by step.
std::vector<LossRange> column_ranges(std::span<const LossPoint> points, double x0, double x1, int buckets);

// Whether `points` are dense in [x0, x1]: more than two per bucket, so that drawing every point
// would fill columns rather than trace a line.
bool dense_in(std::span<const LossPoint> points, double x0, double x1, int buckets);

// What to draw of one curve: a band through `columns`, then a line through `line`.
struct CurveShape {
  std::vector<LossRange> columns;
  std::vector<LossPoint> line;
};

// One curve's reduction to pixel columns, kept from frame to frame. A long run has hundreds of
// thousands of points per curve; the reduction is redone only when the curve has grown by 1% (at
// most 128 points) or the axis has changed, and the points that arrived since are reduced on
// their own. A curve that is not dense is a line through its points.
class CurveReduction {
 public:
  CurveShape shape(std::span<const LossPoint> points, double x0, double x1, int buckets);

 private:
  const LossPoint* data_ = nullptr;
  size_t size_ = 0;
  double x0_ = 0, x1_ = 0;
  int buckets_ = 0;
  std::vector<LossRange> columns_;  // empty when the curve is not dense: `line_` is all of it
  std::vector<LossPoint> line_;
};

// The value of a series at step x (the nearest point), for hover read-outs; false when empty.
bool nearest_point(std::span<const LossPoint> points, double x, LossPoint& out);

}  // namespace ringlab::view_model

#pragma once
// Everything the views draw, built from a run's events: the recent collectives, the loss
// curves, the sampler's shards, the timeline, and where each rank is. It is fed event by event
// (consume) or from an EventStore (ingest), holds no UI state, and keeps bounded memory.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/view_model/collective_log.h"
#include "engine/view_model/failure_diagnosis.h"
#include "engine/view_model/loss_series.h"
#include "engine/view_model/sampler_history.h"
#include "engine/view_model/step_rate.h"
#include "engine/view_model/timeline_model.h"
#include "engine/events/event_store.h"
#include "engine/job/job_config.h"

namespace ringlab::view_model {

// One set of worker processes. A live change of world size or backend starts a new one.
struct Generation {
  int index = 0;
  bool has_job = false;
  JobConfig job;          // from the workers' RunBegin
  bool epochs_announced = true;  // the RunBegin named its epochs (a PyTorch script's may not: job.epochs is then JobConfig's default)
  std::vector<std::string> unreported;  // the training fields its RunBegin left out (a script's): unreported_training_fields
  bool epochs_seen = false;      // rank 0 said where an epoch begins (a shard, a step past epoch 0, an epoch's end)
  int world_size = 0;
};

struct RankProgress {
  int generation = 0;
  int64_t step = -1;
  int epoch = -1;
  double last_loss = 0.0;
  bool ended = false;
  bool trained_to_the_end = false;  // its RunEnd said it finished its epochs, not that it was stopped
};

class RunModel {
 public:
  RunModel();

  void consume(const Event& event);
  // Consumes the events appended to `store` since the last call. A store that was cleared (it
  // now holds fewer events than were read) starts the model over.
  size_t ingest(const EventStore& store);
  void clear();

  const CollectiveLog& collectives() const { return collectives_; }
  const LossSeries& loss() const { return loss_.series(); }
  const SamplerHistory& sampler() const { return sampler_; }
  const TimelineModel& timeline() const { return timeline_; }
  // The timeline's window that the view holds still (TimelineModel::hold_window).
  void hold_timeline_window(int64_t t0_ns, int64_t t1_ns) { timeline_.hold_window(t0_ns, t1_ns); }
  const std::vector<Generation>& generations() const { return generations_; }
  const Generation* current_generation() const;
  const std::vector<RankProgress>& ranks() const { return ranks_; }
  const std::vector<std::string>& errors() const { return errors_; }  // the latest few
  // The generation the latest of them came from: older than the current one after a restart.
  int errors_generation() const { return errors_generation_; }
  const std::vector<std::string>& logs() const { return logs_; }
  // Which rank broke the run and where the others waited (recomputed only when events came in).
  const FailureDiagnosis& failure() const;
  // The failure the last restart recovered from, if the controller restarted the group.
  const std::optional<FailureDiagnosis>& restarted_failure() const { return failures_.last_restarted(); }
  int restarts() const { return failures_.restarts(); }  // the controller's restarts in this run
  // How the processes ended, from the controller's RunResult: names signals events cannot.
  void note_exits(const std::vector<RankExit>& exits);

  int world_size() const;        // of the current generation (0 before any event)
  int64_t latest_step() const;   // highest step any rank finished, -1 before the first
  int latest_epoch() const;
  // The epoch the status names (from 0): while the run goes on, the one the Sampler's "Newest
  // epoch" shows, the newest whose shards every rank of the current world has drawn (between two
  // epochs, one with no step yet). Each rank's events come in batches of their own, so the
  // furthest rank's step was often an epoch ahead of the Sampler's.
  int followed_epoch(bool live) const;
  // The steps the status counts as done: while the run goes on, those every rank of the current
  // world has finished (the slowest rank's, which is in the followed epoch), once it has ended
  // the furthest rank's. A count from the furthest rank ran up to a batch of events ahead of the
  // epoch beside it.
  int64_t steps_done(bool live) const;
  bool run_ended() const { return run_ended_; }  // every rank of the current generation ended
  // Every rank of the current generation ended, each having trained all its epochs: a Stop that
  // reached the workers after that stopped nothing.
  bool trained_to_the_end() const;
  // The newest world's step time: the workers' own once they end, else (still training, or ended
  // at once while held at the gate, before they said) rank 0's steps timed from its events.
  double us_per_step() const { return us_per_step_ > 0 ? us_per_step_ : own_pace_.us_per_step(); }
  double live_us_per_step() const { return step_rate_.us_per_step(); }  // the last second's
  // Rank 0's steps the step-through gate never held (in the newest world), and their time a step.
  int64_t ungated_steps() const { return own_pace_.ungated_steps(); }
  double ungated_us_per_step() const { return own_pace_.ungated_us_per_step(); }
  // Rank 0's slowest step in the newest world, and the mean of its other steps (µs) when that one
  // step makes up most of the mean (a rank that slept, a first all-reduce that waited for it).
  const SlowestStep& slowest_step() const { return own_pace_.slowest(); }
  std::optional<double> others_us_per_step() const {
    return ringlab::others_us_per_step(own_pace_.us_per_step(), own_pace_.steps(), own_pace_.slowest());
  }
  int64_t last_step_ns() const { return step_rate_.last_step_ns(); }     // when the newest step ended
  // The gate (or Pause) let the workers go: the last second's pace would count the hold.
  void forget_live_pace() { step_rate_.clear(); }
  uint64_t events_seen() const { return events_seen_; }
  uint64_t version() const { return events_seen_; }  // changes whenever anything was consumed

  // How much the model holds, for the memory benchmark and --state-json.
  struct Holdings {
    size_t collectives = 0, transfers = 0, timeline_spans = 0, loss_points = 0, sampler_indices = 0;
  };
  Holdings holdings() const;

  // A label for the loss curves; defaults to the job's description once known.
  void set_label(std::string label);

 private:
  int generation_of(const Event& event);
  int generation_begun_by(const Event& run_begin) const;
  void note_run_begin(const Event& event, int generation);
  bool in_current_generation(const RankProgress& r) const;
  void keep(std::vector<std::string>& list, std::string line);

  CollectiveLog collectives_;
  LossSeriesBuilder loss_;
  SamplerHistory sampler_;
  TimelineModel timeline_;
  FailureTracker failures_;
  mutable FailureDiagnosis failure_cache_;  // the UI thread's: failure() is called every frame
  mutable uint64_t failure_cache_version_ = ~uint64_t{0};
  uint64_t exits_noted_ = 0;
  std::vector<Generation> generations_;
  std::vector<int> rank_generation_;  // RunBegins seen from each rank
  std::vector<RankProgress> ranks_;
  // Where the current generation took over: the last step and epoch trained before it (a live
  // change goes on from there; a restart from its checkpoint). Its own ranks report no step until
  // they train one, and a paused change keeps them at the gate: the run's count is not lost meanwhile.
  int64_t carried_step_ = -1;
  int carried_epoch_ = -1;
  std::optional<std::pair<int64_t, int>> restart_from_;  // a Restart's checkpoint: what the next generation carries
  std::vector<std::string> errors_;
  int64_t stopped_at_ns_ = -1;  // the controller's RunStopped: the errors after it are its teardown
  std::vector<std::string> logs_;
  bool run_ended_ = false;
  bool label_set_ = false;
  double us_per_step_ = 0.0;
  int errors_generation_ = 0;
  StepPace own_pace_;
  StepRate step_rate_;  // rank 0's, of the current generation
  uint64_t events_seen_ = 0;
  size_t store_cursor_ = 0;
  uint64_t store_version_ = 0;
};

}  // namespace ringlab::view_model

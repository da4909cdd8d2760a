#pragma once
// Writes one CSV row per (rank, step) that finished:
//   rank,epoch,step,loss,step_us,forward_us,backward_us,comm_us,optimizer_us
// step_us runs from StepBegin to StepEnd; the other columns add up that rank's spans inside the
// step (several forward/backward passes with gradient accumulation); comm_us is the sum of its
// collectives' spans. A span without a step number counts toward the step whose time holds it;
// one that names the step but runs outside its time (Join's all-reduce of who still has data,
// between two steps) counts only within it. A joined rank's shadow step has an empty loss.
// Rows are ordered by rank, then by the order the rank's steps ran.
//
// MetricsCsvWriter folds events into rows as they arrive, so a long run is never held in memory:
// a rank's row is complete when its next step begins (a rank's events arrive in order), and
// complete rows wait on disk (RankSpool) until the CSV is written. A restart of the group drops
// the rows of the steps that are done again.
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "engine/events/event.h"
#include "engine/events/rank_spool.h"

namespace ringlab {

inline constexpr const char* kMetricsCsvHeader =
    "rank,epoch,step,loss,step_us,forward_us,backward_us,comm_us,optimizer_us";

class MetricsCsvWriter : public EventSink {
 public:
  void emit(Event event) override;  // one producer at a time (the controller serialises them)
  // Writes the CSV: every finished step, the open ones included. Throws Error naming the path
  // when it cannot be written, or when the rows could not be kept.
  // `what` names the output in that error (the flag that asked for it, where there is one).
  void write(const std::string& path, const char* what = "the metrics CSV");
  void write(std::ostream& out);

  struct Row {
    int64_t step = -1;
    int64_t epoch = -1;
    double loss = 0;
    bool has_loss = true;  // false for a joined rank's shadow step (is_joined_step): its loss is left empty
    int64_t begin_ns = 0, end_ns = 0;
    int64_t forward_ns = 0, backward_ns = 0, comm_ns = 0, optimizer_ns = 0;
  };

 private:
  struct Lane {  // one rank: its open step and the collectives it has begun
    Row row;
    bool open = false, ended = false;
    std::map<int64_t, int64_t> collective_begin_ns;  // collective_id -> begin, while in flight
  };
  Lane& lane(int rank) { return lanes_[rank]; }
  void close_row(int rank, Lane& lane);
  void add_span(Lane& lane, const Event& e);
  void rewind(int64_t step);

  std::map<int, Lane> lanes_;
  RankSpool rows_{"the metrics CSV's rows"};
};

// The whole CSV from a list of events (each rank's events in the order they happened).
void write_metrics_csv(const std::vector<Event>& events, const std::string& path);
void write_metrics_csv(const std::vector<Event>& events, std::ostream& out);

}  // namespace ringlab

#pragma once
// The failure labs' faults and uneven inputs, parsed from a JobConfig: each rank asks its plan
// what to do at each step. Every fault is real: a killed rank is killed by SIGKILL, a dropped
// connection is closed, a skipped collective is not called.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/events/event.h"

namespace ringlab {

struct JobConfig;

struct Fault {
  FaultKind kind = FaultKind::Kill;
  int rank = 0;
  int64_t step = 0;      // Kill, Drop, Skip, Extra, Resize
  double delay_ms = 0;   // Delay
};

// The one spelling of a fault, the one parse_faults reads: "kill:2@5", "delay:1:20".
std::string to_string(const Fault& fault);

// Throws InputError naming the bad entry ("--fault kill:x@3: ...").
std::vector<Fault> parse_faults(const JobConfig& job);
// batches_removed[r] for every rank; throws InputError naming the bad entry.
std::vector<int64_t> parse_uneven(const JobConfig& job);

// True when `job` injects a skipped or an extra collective. Such a run goes without stop votes
// (a broadcast every rank makes at step boundaries, so that they stop together, see
// rank/step_votes.h): the vote is fingerprinted, so the mismatch would still be caught, but
// at the vote ("the stop vote before step 6" against "all-reduce #7"), which hides the lesson's
// point, one rank's all-reduce against another's. Such a run is stopped by signals only, and in
// the app pause and live changes are off for it.
bool breaks_collective_order(const JobConfig& job);
// Whether `ringlab run`'s workers can vote at step boundaries: not when the collective order is
// broken, nor with uneven inputs without Join, where a rank out of batches leaves the loop while
// the others go on: they would wait for it in the vote instead of in the all-reduce the lesson
// (and the flight recorders' line-up) shows.
bool stop_votes_fit(const JobConfig& job);

class FaultPlan {
 public:
  FaultPlan(const JobConfig& job, int rank);
  // The fault this rank injects at `step` of this kind, if any.
  const Fault* at(FaultKind kind, int64_t step) const;
  double delay_ms() const;  // straggler delay per step (0: none)
  int64_t batches_removed(int rank) const;
  bool any_uneven() const;
  int longest_rank() const;  // the lowest rank with the most batches
  bool any() const { return !mine_.empty(); }

 private:
  std::vector<Fault> mine_;
  std::vector<int64_t> removed_;
};

}  // namespace ringlab

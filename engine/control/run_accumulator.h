#pragma once
// Folds what the workers report (events, in arrival order) into a RunResult as they arrive,
// instead of keeping the events and reading them back at the end: the controller's memory then
// does not grow with the length of the run. What does grow (each epoch's shard, each step's
// loss) goes to the result's RunHistory on disk. Not thread-safe: the controller feeds it under
// its own lock.
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/control/controller.h"
#include "engine/events/event.h"
#include "engine/events/killed_rank_position.h"
#include "engine/control/launcher.h"

namespace ringlab {

class RunAccumulator {
 public:
  // keep_history: see ControllerOptions::keep_history.
  RunAccumulator(const JobConfig& job, bool keep_history = true);

  void add(const Event& e);
  int64_t steps_done() const { return rank0_steps_; }  // rank 0's steps so far (progress)

  // The result, once every process has ended: ok only if every rank exited cleanly, no rank
  // reported an error and nobody stopped the run; otherwise `failure` says who stopped it or
  // who failed, how, and where every rank was.
  RunResult finish(const std::vector<RankExit>& exits, const StopInfo& stop = {}) const;

  // "rank 2: step 7, collective 14 (ring, bucket 0), in all-gather step 2 of 3" for each rank,
  // from its last collective and chunk: where every rank was when the run ended.
  std::vector<std::string> rank_positions(int world_size) const;
  // While a run hangs: "rank 1 has not joined collective 8, where rank 0 waits for it", from the
  // ranks' last reports; "" when they do not line up so.
  std::string who_is_missing() const;

 private:
  // The little a rank's last events say about where it is.
  struct RankPosition {
    int64_t step = -1;
    bool has_collective = false;
    bool collective_done = false;
    int64_t collective_step = -1, collective_id = -1;
    int32_t bucket = -1;
    std::string collective_text;
    int64_t chunk_collective = -1;
    int8_t chunk_phase = -1;
    int32_t chunk_ring_step = -1;
    int64_t chunk_sent_in = -1;  // the latest collective in which another rank received its chunk
  };

  void track_position(const Event& e);
  void restart_from(const Event& marker);
  std::string describe(int rank, int world) const;
  int flight_ring_step(int rank, int64_t collective) const;
  std::string stop_message(const StopInfo& stop, bool terminated) const;
  std::string injected_faults(std::set<int>& faulty) const;
  std::string failure_details(const RankExit* failed, const std::vector<RankExit>& exits,
                              const std::vector<nlohmann::json>& flight, const std::vector<int>& lost) const;
  std::string ranks_that_ended_early(const std::vector<RankExit>& exits) const;
  std::vector<int> ended_early(const std::vector<RankExit>& exits) const;  // ranks others still waited for
  std::string stuck_from_last_reports() const;
  std::vector<PeerPosition> last_positions() const;  // each rank's last collective, by rank
  std::string failed_line(const RankExit& failed) const;
  std::string silent_ranks(const RankExit& starter) const;
  std::string who_never_came() const;
  std::string missing_from_collective(bool now) const;
  // Each rank's last position and the flight records. After a stop somebody asked for, that is
  // all: the ranks are where the stop found them, and a line-up of who was missing from a
  // collective (failure_details adds it) would read as blame.
  std::string where_ranks_were(const std::vector<nlohmann::json>& flight, const std::vector<int>& lost,
                               const RankExit* silent = nullptr, const std::vector<int>& stopped = {}) const;
  bool ended_without_a_word(const RankExit& e) const;
  bool ended_from_outside(const RankExit& e) const;
  // The stop from outside ringlab that `failed` names (a SIGTERM it did not send, srun's step
  // ended by Slurm); "" when it is none.
  std::string outside_stop(const RankExit& failed) const;
  std::string rank_name(const RankExit& e) const;

  RunResult r_;
  std::shared_ptr<RunHistory> history_;
  int world_;
  double rank0_us_ = 0.0;
  int64_t rank0_steps_ = 0;
  // Rank 0's steps since its last RunEnd, and their spans: the time of an attempt whose rank 0
  // died or was torn down before it could report its own.
  double unreported_us_ = 0.0;
  int64_t unreported_steps_ = 0;
  // The first step whose loss was not a finite number (inf, nan), on any rank: the run diverged.
  struct Divergence {
    int64_t step = -1;
    int rank = -1;
    double loss = 0;
  } diverged_;
  // Rank 0's first positive finite loss, and the first step whose loss was 100 times it or more:
  // where the divergence began, often long before the loss stopped being a number.
  double first_loss_ = 0;
  struct Blowup {
    int64_t step = -1;
    double loss = 0;
  } blowup_;
  std::string divergence_words() const;
  std::vector<std::string> errors_;
  std::string first_error_;  // the earliest error a rank raised itself: the root cause
  int first_error_rank_ = -1;
  std::vector<nlohmann::json> flight_;  // the ranks' flight records, as they arrived (those that parse)
  std::set<int> spoke_at_end_;  // ranks that sent an error, a torn-down notice or their flight record
  std::set<int> raised_;        // ranks that sent an error of their own
  std::set<int> ended_from_outside_;  // ranks ended by a SIGTERM ringlab did not send (TornDown's code)
  std::set<int> own_errors_;    // ... that was not a lost peer's or a timeout's echo (ErrorCode Other, BadInput)
  std::set<int> not_echoes_;    // ... of any code but PeerClosed and Timeout (a collective mismatch too)
  static constexpr size_t kMaxReportedFaults = 8;
  std::vector<std::string> injected_;  // the faults injected on purpose that fired: "rank 1 at step 5: skip: ..."
  std::set<int> injected_ranks_;       // the ranks they fired on
  std::set<int> finished_;      // ranks whose RunEnd said "done": they ended their training normally
  bool epochs_announced_ = true;  // rank 0's job named its epochs (a script's may not)
  std::vector<std::string> unreported_;  // what rank 0's job left out (a script's): unreported_training_fields
  int epochs_begun_ = 0;          // epochs rank 0 took a step in
  int64_t rank0_first_epoch_steps_ = 0;  // the steps rank 0 took in epoch 0
  // Rank 0 said where its epochs begin: a sampler's shard, a step past epoch 0, an epoch's end. A
  // script with no sampler and no set_epoch() trains "in epoch 0" throughout: its epochs are unknown.
  bool epochs_seen_ = false;
  std::map<int, RankPosition> positions_;
};

}  // namespace ringlab

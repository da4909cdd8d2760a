#include "engine/control/run_accumulator.h"

#include <algorithm>
#include <cmath>

#include <fmt/core.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/control/library_words.h"
#include "engine/core/error.h"
#include "engine/job/epoch_shape.h"
#include "engine/job/fault_plan.h"
#include "engine/events/ended_early.h"
#include "engine/events/flight_recorder.h"
#include "engine/events/stuck_collective.h"
#include "engine/events/killed_rank_position.h"
#include "engine/events/ring_step_words.h"
#include "engine/events/training_step_words.h"

namespace ringlab {
namespace {

constexpr int kMaxReportedRank = kMaxWorldSize;  // a rank number beyond this is not a rank of this run

// "rank 2: <text>", without doubling a prefix the error already carries.
std::string with_rank(const Event& e) {
  if (e.rank < 0) return e.text;
  const std::string prefix = fmt::format("rank {}: ", e.rank);
  return e.text.rfind(prefix, 0) == 0 ? e.text : prefix + e.text;
}

// The ranks whose process was stopped (SIGSTOP, Ctrl-Z) when the launcher ended the run.
std::vector<int> stopped_ranks(const std::vector<RankExit>& exits) {
  std::vector<int> ranks;
  for (const RankExit& e : exits)
    if (e.was_stopped && e.rank >= 0) ranks.push_back(e.rank);
  std::ranges::sort(ranks);
  return ranks;
}

// A straggler's delay fires before every step of its rank, and says so only after each sleep (a
// Straggle event), which a run whose others gave up during that sleep never receives: the job
// names it. Where it failed the run, the others' timeout is its echo.
void add_stragglers(const JobConfig& job, std::vector<std::string>& faults, std::set<int>& ranks) {
  std::vector<Fault> planned;
  try {
    planned = parse_faults(job);
  } catch (const InputError&) {
    return;  // a job that does not parse was refused before any rank started
  }
  for (const Fault& f : planned) {
    if (f.kind != FaultKind::Delay || ranks.count(f.rank)) continue;
    faults.push_back(fmt::format("rank {}: delay: {} ms before each of its steps (a straggler: the others wait for it "
                                 "in every all-reduce)", f.rank, static_cast<int64_t>(f.delay_ms)));
    ranks.insert(f.rank);
  }
}

// How a rank ended by a SIGTERM from outside ringlab is said, after "was" / "it was".
std::string outside_sigterm_words(const RankExit& e) {
  return fmt::format("ended by a SIGTERM that ringlab did not send ({}): kill, scancel, or a job's time limit",
                     e.describe());
}

}  // namespace

RunAccumulator::RunAccumulator(const JobConfig& job, bool keep_history)
    : history_(std::make_shared<RunHistory>(keep_history)), world_(job.world_size) {
  r_.job = job;
  r_.history = history_;
}

void RunAccumulator::add(const Event& e) {
  if (e.kind == EventKind::RunBegin && e.rank == 0) {
    try {
      const nlohmann::json job = nlohmann::json::parse(e.text);
      r_.job = job.get<JobConfig>();
      epochs_announced_ = job.contains("epochs");
      unreported_ = unreported_training_fields(job);
      world_ = static_cast<int>(e.value);
    } catch (const nlohmann::json::exception& x) {
      errors_.push_back(fmt::format("rank 0: its run_begin event carries a job that does not parse ({})", x.what()));
    }
  }
  if (e.rank >= r_.rank_count && e.rank < kMaxReportedRank) r_.rank_count = e.rank + 1;
  if (e.kind == EventKind::StepEnd && e.rank == 0 && e.epoch >= 0) epochs_begun_ = std::max(epochs_begun_, e.epoch + 1);
  if (e.kind == EventKind::StepEnd && e.rank == 0 && e.epoch == 0) ++rank0_first_epoch_steps_;
  if (e.rank == 0 && (e.kind == EventKind::SamplerShard || e.kind == EventKind::EpochEnd ||
                      (e.kind == EventKind::StepEnd && e.epoch > 0)))
    epochs_seen_ = true;
  track_position(e);
  switch (e.kind) {
    case EventKind::CollectiveBegin:
      if (e.text == "demo" && e.rank == 0) r_.allreduce_demo_input = e.values;
      break;
    case EventKind::CollectiveEnd:
      if (e.text == "demo" && e.rank == 0) r_.allreduce_demo_output = e.values;
      break;
    case EventKind::SamplerShard:
      if (e.rank >= 0 && e.rank < kMaxReportedRank)
        history_->add_shard_piece(e.rank, payload_size(e), piece_offset(e), e.indices);
      break;
    case EventKind::FinalParameters:
      if (e.rank == 0) {
        if (first_piece(e)) r_.final_parameters.clear();
        r_.final_parameters.insert(r_.final_parameters.end(), e.values.begin(), e.values.end());
      }
      break;
    case EventKind::StepEnd:
      // A joined rank's shadow step has no loss: null in the report, as a loss that is not a number.
      if (e.rank >= 0 && e.rank < kMaxReportedRank) history_->add_step_loss(e.rank, is_joined_step(e) ? NAN : e.value);
      // The first step whose loss was not finite, and of the ranks at it the lowest (as they
      // arrive, the order of ranks at one step is chance).
      if (!is_joined_step(e) && !std::isfinite(e.value) && e.step >= 0 &&
          (diverged_.step < 0 || e.step < diverged_.step || (e.step == diverged_.step && e.rank < diverged_.rank)))
        diverged_ = {e.step, e.rank, e.value};
      if (e.rank == 0 && !is_joined_step(e) && std::isfinite(e.value) && e.value > 0) {
        if (first_loss_ <= 0) first_loss_ = e.value;
        else if (blowup_.step < 0 && e.value >= 100 * first_loss_) blowup_ = {e.step, e.value};
      }
      if (e.rank == 0) {
        ++rank0_steps_;
        ++unreported_steps_;
        unreported_us_ += static_cast<double>(std::max<int64_t>(e.t_end_ns - e.t_begin_ns, 0)) / 1e3;
        r_.slowest_step.add(e.step, std::max<int64_t>(e.t_end_ns - e.t_begin_ns, 0));
      }
      break;
    case EventKind::EpochEnd:
      if (e.rank == 0) r_.epoch_mse.push_back(e.value);
      break;
    case EventKind::RunEnd:
      if (e.text == "done") finished_.insert(e.rank);
      if (e.rank == 0) {
        r_.steps += e.step;
        rank0_us_ += e.value * static_cast<double>(e.step);
        unreported_us_ = 0;
        unreported_steps_ = 0;
      }
      break;
    case EventKind::Error:
      spoke_at_end_.insert(e.rank);
      raised_.insert(e.rank);
      if (e.code == static_cast<int32_t>(ErrorCode::Other) || e.code == static_cast<int32_t>(ErrorCode::BadInput))
        own_errors_.insert(e.rank);
      if (e.code != static_cast<int32_t>(ErrorCode::PeerClosed) && e.code != static_cast<int32_t>(ErrorCode::Timeout))
        not_echoes_.insert(e.rank);
      errors_.push_back(with_rank(e));
      if (first_error_.empty()) {
        first_error_ = with_rank(e);
        first_error_rank_ = e.rank;
      }
      break;
    case EventKind::TornDown:  // listed, never the first error
      // A rank that raised its own error first was on its way out when the controller took the
      // group down: "stopped by the controller" would list it twice, as if for two reasons.
      if (!raised_.count(e.rank)) errors_.push_back(with_rank(e));
      spoke_at_end_.insert(e.rank);
      if (e.code == kTornDownFromOutside) ended_from_outside_.insert(e.rank);
      break;
    case EventKind::FlightRecord:
      spoke_at_end_.insert(e.rank);
      try {
        flight_.push_back(nlohmann::json::parse(e.text));
      } catch (const nlohmann::json::exception&) {
      }
      break;
    case EventKind::Restart: restart_from(e); break;
    case EventKind::Fault:  // a fault injected on purpose: the report names it, whatever it did to the others
      if (e.rank >= 0 && injected_.size() < kMaxReportedFaults) {
        injected_.push_back(e.step >= 0 ? fmt::format("rank {} at step {}: {}", e.rank, e.step, e.text)
                                        : fmt::format("rank {}: {}", e.rank, e.text));
        injected_ranks_.insert(e.rank);
      }
      break;
    default: break;
  }
}

// A restart resumes from the epoch checkpoint: what the failed attempt did after it is done
// again, so it is dropped here, and so are its errors.
void RunAccumulator::restart_from(const Event& marker) {
  history_->rewind(marker.epoch, marker.step);
  r_.epoch_mse.resize(std::min<size_t>(r_.epoch_mse.size(), static_cast<size_t>(std::max(0, marker.epoch))));
  r_.steps = marker.step;
  rank0_steps_ = marker.step;
  unreported_us_ = 0;
  unreported_steps_ = 0;
  errors_.clear();
  raised_.clear();
  own_errors_.clear();
  not_echoes_.clear();
  injected_.clear();
  injected_ranks_.clear();
  // The new group numbers its collectives afresh and redoes the steps after the checkpoint: a
  // position from the failed attempt would place a rank where the new one never was.
  positions_.clear();
  first_error_.clear();
  first_error_rank_ = -1;
  diverged_ = {};
  first_loss_ = 0;
  blowup_ = {};
  flight_.clear();
  spoke_at_end_.clear();
  finished_.clear();
}

void RunAccumulator::track_position(const Event& e) {
  if (e.rank < 0 || e.rank >= kMaxReportedRank) return;
  RankPosition& p = positions_[e.rank];
  if (e.step >= 0) p.step = std::max(p.step, e.step);
  if (e.kind == EventKind::CollectiveBegin) {
    p.has_collective = true;
    p.collective_done = false;
    p.collective_step = e.step;
    p.collective_id = e.collective_id;
    p.bucket = e.bucket;
    p.collective_text = e.text;
  } else if (e.kind == EventKind::CollectiveEnd && p.has_collective && e.collective_id == p.collective_id) {
    p.collective_done = true;
  } else if (e.kind == EventKind::ChunkTransfer) {
    p.chunk_collective = e.collective_id;
    p.chunk_phase = e.phase;
    p.chunk_ring_step = e.ring_step;
    // Its sender was in that collective too, whatever the sender's own events got to say.
    if (e.src >= 0 && e.src < kMaxReportedRank && e.src != e.rank) {
      int64_t& sent_in = positions_[e.src].chunk_sent_in;  // a map: `p` stays where it is
      sent_in = std::max(sent_in, e.collective_id);
    }
  }
}

std::string RunAccumulator::describe(int rank, int world) const {
  const auto it = positions_.find(rank);
  const RankPosition p = it == positions_.end() ? RankPosition{} : it->second;
  if (!p.has_collective && p.step < 0) return fmt::format("rank {}: no step or collective reported", rank);
  if (!p.has_collective) return fmt::format("rank {}: no collective started (last step {})", rank, p.step);
  const std::string collective =
      p.collective_text == "demo"
          ? fmt::format("collective {} (the [1, 2, 3] demo all-reduce)", p.collective_id)
          : fmt::format("collective {} ({}{})", p.collective_id, p.collective_text,
                        p.bucket >= 0 ? fmt::format(", bucket {}", p.bucket) : "");
  // A rank that began a later step before it died (a kill as a step begins) is at that step, as
  // the app's Failure lab says: its last collective is named as the earlier step's.
  if (p.collective_done && p.step > p.collective_step)
    return fmt::format("rank {}: step {}, having completed {} {}", rank, p.step, collective,
                       p.collective_step < 0 ? "before it" : fmt::format("in step {}", p.collective_step));
  // Said as the line above says a rank a step further on: both read "having completed".
  const std::string at = p.collective_step < 0 ? "before the first step" : fmt::format("step {}", p.collective_step);
  if (p.collective_done) return fmt::format("rank {}: {}, having completed {}", rank, at, collective);
  const std::string where = fmt::format("rank {}: {}, {}", rank, at, collective);
  // Only the ring reports its chunks (the demo all-reduce goes round the ring too): a native
  // all-reduce (the library's own) is simply not finished.
  if (p.collective_text != "ring" && p.collective_text != "demo" && p.chunk_collective != p.collective_id)
    return where + ", not finished";
  // Traced without chunks (--trace-level steps or none), the ring says nothing of its steps: only
  // the flight recorder can tell which one it was in.
  if (r_.job.trace_level != "chunks") {
    const int in_flight = flight_ring_step(rank, p.collective_id);
    return where + (in_flight >= 0 ? ", in " + ring_step_words(in_flight, world) : ", not finished");
  }
  // The step in progress, as the ring's own errors and the flight recorder name it: the one after
  // the last whose chunk arrived (the chunk events say which steps are done).
  const int done = p.chunk_collective != p.collective_id ? 0 : (p.chunk_phase == 0 ? 0 : world - 1) + p.chunk_ring_step + 1;
  // A step ends when its chunk has arrived and its own send has gone. The flight recorder counts
  // a step begun only once the last one has ended both ways: behind the chunks, the rank's send
  // had not finished (MPI's to a dead neighbour never does), and the table below says that step.
  const int started = flight_ring_step(rank, p.collective_id);
  if (started >= 0 && started < done)
    return where + ", in " + ring_step_words(started, world) + " (its chunk arrived; its send had not finished)";
  if (done >= 2 * (world - 1)) return where + ", every ring step done";
  return where + ", in " + ring_step_words(done, world) + (done == 0 ? ", no chunk received yet" : "");
}

// The ring step the rank's flight record says it began in `collective`, if it sent one.
int RunAccumulator::flight_ring_step(int rank, int64_t collective) const {
  for (const nlohmann::json& record : flight_) {
    if (record.value("rank", -1) != rank || !record.contains("entries")) continue;
    for (const nlohmann::json& e : record.at("entries"))
      if (e.value("seq", int64_t{-1}) == collective && e.value("state", std::string()) != "completed")
        return e.value("ring_step", -1);
  }
  return -1;
}

std::vector<std::string> RunAccumulator::rank_positions(int world_size) const {
  std::vector<std::string> lines;
  for (int r = 0; r < world_size; ++r) lines.push_back(describe(r, world_size));
  return lines;
}

std::string RunAccumulator::divergence_words() const {
  const std::string began =
      blowup_.step >= 0 && blowup_.step < diverged_.step
          ? fmt::format(" (it began earlier: rank 0's loss was {:.6g} at step {}, over 100 times its first, {:.6g})",
                        blowup_.loss, blowup_.step, first_loss_)
          : "";
  // A loss that grew first is the learning rate's doing, most often; one that had not (a script's
  // NaN) may as well come from its data or its loss's arithmetic. Rank 0's growth is what is kept.
  const char* cause = !began.empty() ? "a learning rate too large for the model and its data is the usual cause"
                                     : "rank 0's loss had not grown 100-fold before: a learning rate far too large can "
                                       "do that in a step or two, as can a NaN or infinity in the data or in the loss's "
                                       "arithmetic (a log of 0, a 0/0)";
  return fmt::format("the training diverged: rank {}'s loss was {} at step {}{}, and every process went on to its end "
                     "(from there its parameters are not numbers); {}",
                     diverged_.rank, std::isnan(diverged_.loss) ? "nan" : diverged_.loss > 0 ? "inf" : "-inf",
                     diverged_.step, began, cause);
}

// "interrupted by SIGINT (Ctrl-C) at step 1234, after 3 of 1000000 epochs"; and whether the
// workers stopped together at a step boundary or had to be terminated.
// "\nfault injected: ..." for the faults that fired and the stragglers the job names ("" for
// none); `faulty` gets their ranks.
std::string RunAccumulator::injected_faults(std::set<int>& faulty) const {
  std::vector<std::string> faults = injected_;
  faulty = injected_ranks_;
  add_stragglers(r_.job, faults, faulty);
  return faults.empty() ? "" : fmt::format("\nfault injected: {}", fmt::join(faults, "; "));
}

std::string RunAccumulator::stop_message(const StopInfo& stop, bool terminated) const {
  std::string what;
  switch (stop.cause) {
    case StopCause::Interrupt: what = "interrupted by SIGINT (Ctrl-C)"; break;
    case StopCause::Terminate: what = "stopped by SIGTERM"; break;
    case StopCause::StopButton: what = "the run was stopped"; break;
    default:
      // A stop somebody asked for (SIGHUP) is named by its cause, and its detail ("on node 1")
      // follows; any other stop's detail says all of it.
      what = stop.detail.empty() || asked_by_user(stop.cause) ? fmt::format("stopped by {}", to_string(stop.cause))
                                                              : stop.detail;
      break;
  }
  if (!asked_by_user(stop.cause)) return what;
  if (!stop.detail.empty()) what += " " + stop.detail;  // "on node 1"
  if (stop.script) {
    // A script's epochs are its own: the job it announced says 4 unless it told watch() otherwise.
    what += fmt::format(" at step {}", rank0_steps_);
    if (!r_.epoch_mse.empty()) what += fmt::format(", after {} epochs", r_.epoch_mse.size());
    return what + ": the script's processes were sent SIGTERM (a script does not stop together at a step boundary)";
  }
  what += fmt::format(" at step {}, after {} of {} epochs", rank0_steps_, r_.epoch_mse.size(), r_.job.epochs);
  what += terminated ? ": the workers did not all reach a step boundary in time and were terminated"
                     : ": the workers stopped together at a step boundary";
  return what;
}

// When mpirun or srun started the ranks, the controller sees only the starter's exit, not which
// rank's process ended first. A rank that was killed or crashed says nothing, while the others,
// stopped after it, each send an error or their flight record: the silent ones are named.
// mpirun exits with 128 + the signal that ended the first rank it saw end badly.
std::string RunAccumulator::silent_ranks(const RankExit& starter) const {
  std::vector<int> silent;
  for (int r = 0; r < world_; ++r)
    if (!spoke_at_end_.count(r)) silent.push_back(r);
  if (silent.empty() || static_cast<int>(silent.size()) == world_) return "";
  if (const int sig = starter.signal_in_exit_code(); silent.size() == 1 && starter.program == "mpirun" && sig != 0)
    return fmt::format("rank {} failed: killed by {} (mpirun's exit code {} is 128 + {}); ", silent.front(),
                       signal_name(sig), starter.exit_code, sig);
  const bool one = silent.size() == 1;
  return fmt::format("{} {} failed: {} ended without a word, killed or crashed ({}'s own message says how); ",
                     one ? "rank" : "ranks", fmt::join(silent, ", "), one ? "it" : "they", starter.program);
}

// "rank 2" or, over several nodes, "rank 2 (node 1)".
std::string RunAccumulator::rank_name(const RankExit& e) const {
  return fmt::format("rank {}{}", e.rank, r_.job.node_count() > 1 ? fmt::format(" (node {})", e.node) : "");
}

std::string RunAccumulator::outside_stop(const RankExit& failed) const {
  if (ended_from_outside(failed)) return rank_name(failed) + " was " + outside_sigterm_words(failed);
  // srun passes on the signal that stopped its step (128 + N); ringlab sent none (the exit
  // would be marked terminated): Slurm did, on scancel or at the job's time limit.
  if (const int sig = failed.signal_in_exit_code(); failed.rank < 0 && failed.program == "srun" && !failed.terminated && sig != 0)
    return fmt::format("srun was stopped by {} (exit code {}: Slurm stops a step so on scancel or at the job's time "
                       "limit)", signal_name(sig), failed.exit_code);
  return "";
}

std::string RunAccumulator::failed_line(const RankExit& failed) const {
  if (ended_from_outside(failed))
    return rank_name(failed) + " failed: it was " + outside_sigterm_words(failed) + "; the others then lost it";
  if (failed.rank >= 0)
    return fmt::format("{} failed: {}{}", rank_name(failed), failed.describe(),
                       // Said once: a rank that reported its own error has it as the first error.
                       failed.last_words.empty() || first_error_rank_ == failed.rank
                           ? ""
                           : "; its stderr ended with: " + failed.last_words + library_words_explained(failed.last_words));
  if (std::string outside = outside_stop(failed); !outside.empty()) return outside;
  RankExit starter = failed;
  if (starter.program.empty()) starter.program = "mpirun";
  return fmt::format("{}{} failed: {}", silent_ranks(starter), starter.program, failed.describe());
}

// A rank that ended normally while others waited for it in a later collective
// (engine/events/ended_early.h): said before the first error, which is only its echo.
std::vector<int> RunAccumulator::ended_early(const std::vector<RankExit>& exits) const {
  // Its own RunEnd says so too: the controller may have torn it down on its way out, once the
  // rank it left waiting had failed.
  std::set<int> ended = finished_;
  for (const RankExit& e : exits)
    if (e.ok() && e.rank >= 0) ended.insert(e.rank);
  std::vector<int> early;
  const std::vector<PeerPosition> ranks = last_positions();
  for (const int rank : ended)
    if (rank < static_cast<int>(ranks.size()) && !left_waiting(ranks[rank].collective, ranks).empty()) early.push_back(rank);
  return early;
}

std::string RunAccumulator::ranks_that_ended_early(const std::vector<RankExit>& exits) const {
  std::string out;
  const std::vector<PeerPosition> ranks = last_positions();
  for (const int rank : ended_early(exits)) {
    const int64_t last = ranks[rank].collective;
    std::vector<std::string> waiting;
    for (size_t r : left_waiting(last, ranks)) waiting.push_back(fmt::format("rank {} in collective {}", r, ranks[r].collective));
    out += fmt::format(
        "\nrank {} ended its training {}, while {} still waited for it: the ranks did not call "
        "the same collectives. Every rank of a DDP run must take the same steps: one with fewer batches, or one that "
        "skipped a step or left its loop early, leaves the others waiting (torch's Join context manager is made for "
        "uneven inputs).",
        rank, last >= 0 ? fmt::format("after collective {}", last) : "before any collective", fmt::join(waiting, ", "));
  }
  return out;
}

// Without flight records (a PyTorch script sends none), the ranks' last reported collectives say
// which one the run is stuck in and who never joined it (engine/events/stuck_collective.h).
std::vector<PeerPosition> RunAccumulator::last_positions() const {
  std::vector<PeerPosition> ranks;
  for (int r = 0; r < world_; ++r) {
    const auto it = positions_.find(r);
    const bool known = it != positions_.end() && it->second.has_collective;
    ranks.push_back({known ? it->second.collective_id : -1, known && it->second.collective_done,
                     known ? it->second.step : -1});
  }
  return ranks;
}

// Who the others wait for, by the ranks' last reports: "rank 1 has not joined collective 8, where
// rank 0 waits for it" while the run hangs (`now`), "... never joined ..., where rank 0 waited for
// it" once it has ended; "" when the reports do not line up so.
std::string RunAccumulator::missing_from_collective(bool now) const {
  const StuckCollective stuck = stuck_collective(last_positions());
  if (stuck.collective < 0 || stuck.missing.empty()) return "";
  const bool one = stuck.missing.size() == 1, one_waits = stuck.waiting.size() == 1;
  return fmt::format("{} {} {} collective {}, where {} {} {} for {}", one ? "rank" : "ranks", fmt::join(stuck.missing, ", "),
                     !now ? "never joined" : one ? "has not joined" : "have not joined", stuck.collective,
                     one_waits ? "rank" : "ranks", fmt::join(stuck.waiting, ", "),
                     !now ? "waited" : one_waits ? "waits" : "wait", one ? "it" : "them");
}

// The watchdog's stop says only that nothing moved: the ranks' last reports say who the others
// waited for, which is what a person looks for first.
std::string RunAccumulator::who_never_came() const {
  const std::string missing = missing_from_collective(false);
  return missing.empty() ? "" : "\n" + missing;
}

std::string RunAccumulator::who_is_missing() const { return missing_from_collective(true); }

// Ended by a SIGTERM ringlab did not send (its notice said so), not by the controller's teardown.
bool RunAccumulator::ended_from_outside(const RankExit& e) const {
  return e.rank >= 0 && !e.terminated && ended_from_outside_.count(e.rank) > 0;
}

std::string RunAccumulator::stuck_from_last_reports() const {
  const StuckCollective stuck = stuck_collective(last_positions());
  if (stuck.collective < 0 || stuck.missing.empty()) return "";
  return fmt::format("\nfrom the ranks' last reports: collective {} has ranks {{{}}} waiting in it; missing ranks: {{{}}}",
                     stuck.collective, fmt::join(stuck.waiting, ", "), fmt::join(stuck.missing, ", "));
}

// Who failed, how, the errors the ranks reported, where every rank was, and their flight records.
std::string RunAccumulator::failure_details(const RankExit* failed, const std::vector<RankExit>& exits,
                                            const std::vector<nlohmann::json>& flight, const std::vector<int>& lost) const {
  // A rank that ended normally while others waited for it caused the failure that the first rank
  // to fail only echoes ("Connection closed by peer"): it comes first, where a reader looks.
  std::string msg = ranks_that_ended_early(exits);
  const std::vector<int> stopped = stopped_ranks(exits);
  if (!stopped.empty())
    msg += fmt::format("\n{} stopped (SIGSTOP, or Ctrl-Z on it): the other ranks waited for it in their collective "
                       "until their timeout", stopped.size() == 1 ? fmt::format("rank {}'s process was", stopped[0])
                                                                  : fmt::format("the processes of ranks {} were",
                                                                                fmt::join(stopped, ", ")));
  // A fault injected on purpose is the cause: where it fired on another rank than the first to
  // fail (a skip that the others' collective check caught), it comes first, where a reader looks.
  std::set<int> faulty;
  const std::string injected = injected_faults(faulty);
  const std::string failed_words = failed ? failed_line(*failed) : "";
  const bool names_a_faulty_rank = std::any_of(faulty.begin(), faulty.end(), [&](int rank) {
    return failed_words.rfind(fmt::format("rank {} ", rank), 0) == 0;  // mpirun's line may name the silent rank
  });
  // Ranks that raised errors of their own at about the same time (a script's exceptions, not a
  // lost peer's echo) exit, and their errors arrive, in either order: the first to exit and the
  // first error may name different ranks, and both are causes.
  if (own_errors_.size() > 1) msg += fmt::format("\nranks {} raised errors of their own", fmt::join(own_errors_, ", "));
  if (failed && !injected.empty() && !names_a_faulty_rank) msg += injected + "\nthen " + failed_words;
  else if (failed) msg += (stopped.empty() ? "\n" : "\nthen ") + failed_words + injected;
  else msg += injected;
  // A rank that failed without a word (killed, or a script's os._exit) raised no error: the first
  // one is another rank's, which lost its peer mid-collective.
  const RankExit* silent = failed && (ended_without_a_word(*failed) || ended_from_outside(*failed)) ? failed : nullptr;
  if (!first_error_.empty() && silent && first_error_rank_ != silent->rank)
    msg += fmt::format("\nfirst error, from a rank left without its peer (rank {} raised none): {}", failed->rank,
                       first_error_);
  else if (!first_error_.empty())
    msg += fmt::format("\nfirst error: {}", first_error_);
  if (errors_.size() > 1) {
    msg += "\nall errors, in the order they arrived:";
    for (const std::string& e : errors_) msg += "\n  " + e;
  }
  msg += "\n" + where_ranks_were(flight, lost, silent, stopped);
  if (flight.empty()) msg += stuck_from_last_reports();
  if (msg.front() == '\n') msg.erase(0, 1);
  return msg;
}

// Killed by a signal, or ended with a failing exit code and no error or flight record: its last
// events may have died with it.
bool RunAccumulator::ended_without_a_word(const RankExit& e) const {
  return e.rank >= 0 && !e.ok() && !e.terminated && (e.signal != 0 || !spoke_at_end_.count(e.rank));
}

// A rank that ended without a word (`silent`: killed, or a failing exit with no error) takes its
// unsent events with it: its line is its last report, and the others place it
// (engine/events/killed_rank_position.h), as the app's Failure lab does.
// A stopped process's unsent events are held in it likewise, and a lost node's (`lost`) went with
// it: their line is their last report.
std::string RunAccumulator::where_ranks_were(const std::vector<nlohmann::json>& flight, const std::vector<int>& lost,
                                             const RankExit* silent, const std::vector<int>& stopped) const {
  std::string msg = "where each rank was:";
  const std::vector<PeerPosition> ranks = last_positions();
  const std::vector<std::string> lines = rank_positions(world_);
  for (int r = 0; r < static_cast<int>(lines.size()); ++r) {
    msg += "\n  " + lines[r];
    if (std::ranges::find(lost, r) != lost.end()) {
      msg += " (its last report: its unsent events went with its node)";
      continue;
    }
    const bool was_stopped = std::ranges::find(stopped, r) != stopped.end();
    if ((!silent || r != silent->rank) && !was_stopped) continue;
    if (r >= static_cast<int>(ranks.size())) continue;
    std::vector<PeerPosition> others = ranks;
    others.erase(others.begin() + r);
    const auto own = positions_.find(r);
    const int64_t sent_in = own == positions_.end() ? -1 : own->second.chunk_sent_in;
    if (const std::optional<KilledRankPosition> placed = place_killed_rank(ranks[r], others, sent_in)) {
      // Step -1 is before the first step (DDP's broadcast, the demo all-reduce): said so, not as a number.
      const std::string when = placed->step < 0 ? " before the first step"
                               : fmt::format("{} step {}", placed->done ? ", by" : " at", placed->step);
      msg += fmt::format(" (its last report: it {} later, {} collective {}{}, with its unsent events)",
                         was_stopped ? "was stopped" : silent->signal != 0 ? "died" : "ended",
                         placed->done ? "having completed" : "inside", placed->collective, when);
    }
  }
  if (!flight.empty()) msg += "\n" + format_flight_report(flight, world_);
  return msg;
}

RunResult RunAccumulator::finish(const std::vector<RankExit>& exits, const StopInfo& stop) const {
  RunResult r = r_;
  // Rank 0 says how many steps it trained, and in how long, in its RunEnd. A rank 0 that died (or
  // was torn down) never sends one: its steps after the last RunEnd are those it ended, timed by
  // their spans (a gate's holds included, which its own count leaves out).
  const double us = rank0_us_ + unreported_us_;
  const int64_t timed_steps = r.steps + unreported_steps_;
  r.train_seconds = us * 1e-6;
  r.us_per_step = timed_steps > 0 ? us / static_cast<double>(timed_steps) : 0.0;
  r.steps = std::max(r.steps, rank0_steps_);
  // A PyTorch script that did not tell watch() its epochs: the report says how many it trained
  // in, not JobConfig's default.
  if (!epochs_announced_) r.job.epochs = epochs_begun_;
  // What the script did not report: the epochs only where nothing told where they begin.
  r.job_not_reported = unreported_;
  if (epochs_seen_) std::erase(r.job_not_reported, std::string("epochs"));
  const EpochShape epoch = epoch_shape(r.job, world_);
  r.samples_per_rank = epoch.samples_per_rank;
  r.batches_per_epoch = epoch.steps;
  // A script's loader decides its batches: one that does not draw from the sampler (watch()
  // warns of it) takes more than the sampler's share. Once its first epoch is over, what rank 0
  // took in it is the epoch's count.
  if (stop.script && epochs_begun_ > 1 && rank0_first_epoch_steps_ > 0) r.batches_per_epoch = rank0_first_epoch_steps_;

  const std::vector<nlohmann::json>& flight = flight_;
  const RankExit* failed = nullptr;
  for (const RankExit& e : exits)
    if (!e.ok() && !failed) failed = &e;
  // The first to exit may have failed only on another's account (its peer closed, a timeout)
  // while the rank whose error came first, a cause, exited a moment later: that one heads the
  // story, where "first error" names it too. A first exit with no error at all (killed) stays.
  if (failed && raised_.count(failed->rank) && !not_echoes_.count(failed->rank) && not_echoes_.count(first_error_rank_))
    for (const RankExit& e : exits)
      if (!e.ok() && !e.terminated && e.rank == first_error_rank_) failed = &e;
  // A rank ended by a SIGTERM from outside ringlab is held a moment (it reports first), so the
  // ranks that lost it may exit before it does: it is the cause all the same, ahead of their echoes.
  if (failed && !not_echoes_.count(failed->rank))
    for (const RankExit& e : exits)
      if (!e.ok() && ended_from_outside(e)) failed = &e;
  // A rank that ended its training early and then failed on its own (its final barrier timed out)
  // is the cause the failure's first line names: it comes next, whoever timed out first.
  if (failed)
    for (const int early : ended_early(exits))
      for (const RankExit& e : exits)
        if (e.rank == early && !e.ok() && !e.terminated && failed->rank != early) failed = &e;
  r.stop_cause = stop.cause;
  r.stop_node = stop.cause == StopCause::None ? -1 : stop.node;
  r.stopped_from_outside = failed ? outside_stop(*failed) : "";
  r.ok = !failed && errors_.empty() && stop.cause == StopCause::None;
  // Every process may end well on a loss of nan: the training did not.
  if (r.ok && diverged_.step >= 0) {
    r.ok = false;
    r.failure = divergence_words();
  }
  if (!r.ok && r.failure.empty()) {
    // Stopped by the user, and no process failed on its own meanwhile: the stop is the whole
    // story (errors of ranks torn down mid-collective, a peer's reset connection, are its echo).
    const bool failed_on_its_own =
        std::any_of(exits.begin(), exits.end(), [](const RankExit& e) { return !e.ok() && !e.terminated; });
    const bool terminated = std::any_of(exits.begin(), exits.end(), [](const RankExit& e) { return e.terminated; });
    // A fault injected meanwhile (a straggler's delay that held the others) is said under the stop.
    std::set<int> faulty;
    if (asked_by_user(stop.cause) && !failed_on_its_own)
      r.failure = stop_message(stop, terminated) + injected_faults(faulty) +
                  (terminated ? "\n" + where_ranks_were(flight, stop.lost_ranks) : "");
    else if (stop.cause == StopCause::OtherNode && failed_on_its_own)
      // Another node's note only brought the news first (its rank lost a peer and failed at
      // once); the exits of every node, the cause first, say which rank failed.
      r.failure = failure_details(failed, exits, flight, stop.lost_ranks);
    else if (stop.cause != StopCause::None)  // a process the stop terminated did not fail: the stop says why
      r.failure = stop_message(stop, terminated) + (stop.cause == StopCause::NoProgress ? who_never_came() : "") + "\n" +
                  failure_details(failed && !failed->terminated ? failed : nullptr, exits, flight, stop.lost_ranks);
    else
      r.failure = failure_details(failed, exits, flight, stop.lost_ranks);
  }
  if (!flight.empty()) r.flight_report = flight_report_json(flight, world_).dump(1);
  return r;
}

}  // namespace ringlab

#include "engine/view_model/failure_diagnosis.h"

#include <nlohmann/json.hpp>

#include <algorithm>

#include <fmt/core.h>

#include "engine/job/fault_plan.h"
#include "engine/events/ended_early.h"
#include "engine/events/flight_recorder.h"
#include "engine/events/stuck_collective.h"
#include "engine/events/killed_rank_position.h"
#include "engine/job/job_config.h"

namespace ringlab::view_model {

struct FailureTracker::FlightRecords {
  std::vector<nlohmann::json> list;
};

FailureTracker::FailureTracker() : flight_(std::make_unique<FlightRecords>()) {}
FailureTracker::~FailureTracker() = default;
FailureTracker::FailureTracker(FailureTracker&&) noexcept = default;
FailureTracker& FailureTracker::operator=(FailureTracker&&) noexcept = default;
namespace {


bool is_progress(EventKind kind) {
  switch (kind) {
    case EventKind::StepBegin:
    case EventKind::StepEnd:
    case EventKind::Forward:
    case EventKind::Backward:
    case EventKind::BucketReady:
    case EventKind::CollectiveBegin:
    case EventKind::CollectiveEnd:
    case EventKind::ChunkTransfer:
    case EventKind::OptimizerStep:
    case EventKind::GateWait:
    case EventKind::Fault:
      return true;
    default:
      return false;
  }
}

RankCause cause_of_fault(std::optional<FaultKind> fault) {
  if (!fault) return RankCause::None;
  switch (*fault) {
    case FaultKind::Kill: return RankCause::Killed;
    case FaultKind::Drop: return RankCause::Dropped;
    case FaultKind::Skip: case FaultKind::Extra: case FaultKind::Resize: return RankCause::Mismatch;
    case FaultKind::Delay: return RankCause::None;
  }
  return RankCause::None;
}

// The kind a Fault event carries (nullopt when it carries none).
std::optional<FaultKind> fault_kind_of(const Event& e) {
  if (e.code < 0 || e.code > kLastFaultKind) return std::nullopt;
  return static_cast<FaultKind>(e.code);
}

// The flight recorder's entry for where the rank was last, over what the events said.
void take_flight_entry(const nlohmann::json& last, RankDiagnosis& d) {
  if (!last.is_object()) return;
  d.collective = last.value("seq", int64_t{-1});
  d.op = last.value("op", std::string());
  d.collective_done = last.value("state", std::string()) == "completed";
  d.ring_step = last.value("ring_step", -1);
  d.numel = last.value("numel", int64_t{-1});
  const int64_t step = last.value("step", int64_t{-1});
  if (step >= 0) d.step = step;
}

// What collective `id` was, as a rank that reached it recorded it: a rank placed there by the
// others is named for it ("barrier #26"), not for its own last record ("all-reduce #25"). Only the
// ring sends chunks, so a rank placed by a chunk it sent was in an all-reduce; otherwise, with no
// rank's record at `id`, the op is unknown ("").
std::string op_of_collective(const std::vector<RankDiagnosis>& ranks, int64_t id, int64_t sent_in) {
  for (const RankDiagnosis& o : ranks)
    if (!ended_silently(o.cause) && o.collective == id && !o.op.empty()) return o.op;
  return id == sent_in ? "allreduce" : "";
}

// A killed rank's own record stops short: the others place it (engine/events/killed_rank_position.h).
void place_killed_ranks(FailureDiagnosis& d) {
  std::vector<PeerPosition> others;
  // A stopped process held its last events back too: the others place it likewise.
  const auto silent = [](const RankDiagnosis& r) { return ended_silently(r.cause) || r.process_stopped; };
  for (const RankDiagnosis& o : d.ranks)
    if (!silent(o)) others.push_back({o.collective, o.collective_done, o.step});
  for (RankDiagnosis& killed : d.ranks) {
    if (!silent(killed)) continue;
    const std::optional<KilledRankPosition> placed =
        place_killed_rank({killed.collective, killed.collective_done, killed.step}, others, killed.chunk_sent_in);
    if (!placed) continue;
    if (placed->collective != killed.collective) killed.op = op_of_collective(d.ranks, placed->collective, killed.chunk_sent_in);
    killed.collective = placed->collective;
    killed.collective_done = placed->done;
    killed.ring_step = -1;
    killed.step = std::max(killed.step, placed->step);
    killed.position_from_peers = true;
  }
}

// Who broke the order: the rank among the culprits that the mismatch names; the expected
// fingerprint is the other side's.
void orient(FingerprintMismatch& m, const std::vector<int>& culprits) {
  const auto has = [&](int r) { return std::find(culprits.begin(), culprits.end(), r) != culprits.end(); };
  if (has(m.reporter)) {
    m.culprit = m.reporter;
    m.actual = m.reporter_fingerprint;
    m.expected = m.neighbour_fingerprint;
  } else if (has(m.neighbour)) {
    m.culprit = m.neighbour;
    m.actual = m.neighbour_fingerprint;
    m.expected = m.reporter_fingerprint;
  }
}

// A rank whose process ended normally while another waited for it in a later collective is the
// culprit (engine/events/ended_early.h), when nothing the ranks injected explains the failure.
void mark_ended_early(FailureDiagnosis& d, const std::vector<bool>& ended_normally) {
  if (d.explained()) return;
  const std::vector<PeerPosition> positions = d.positions();
  for (RankDiagnosis& rd : d.ranks)
    if (rd.rank < static_cast<int>(ended_normally.size()) && ended_normally[rd.rank] &&
        !left_waiting(rd.collective, positions).empty())
      rd.cause = RankCause::EndedEarly;
}

// Missing from the collective the others wait in because it raised an error of its own (a
// script's exception), not one that only says it lost a peer or waited too long: the others did
// not wait "until the timeout" for it, the run ended as soon as it raised.
RankCause missing_cause(const RankDiagnosis& r) {
  const bool own = !r.error.empty() && r.error_code &&
                   (*r.error_code == ErrorCode::Other || *r.error_code == ErrorCode::BadInput);
  return own ? RankCause::Raised : RankCause::Missing;
}

// No flight recorders (a PyTorch script sends none): the ranks' last reports line up instead. A
// rank missing from the collective the others wait in is the culprit when nothing else is.
void line_up_last_reports(FailureDiagnosis& d) {
  const StuckCollective stuck = stuck_collective(d.positions());
  if (stuck.collective < 0 || stuck.missing.empty()) return;
  d.stuck_collective = stuck.collective;
  d.stuck_op = d.ranks[stuck.waiting.front()].op;
  d.stuck_from_last_reports = true;
  for (size_t i : stuck.waiting) d.waiting.push_back(d.ranks[i].rank);
  for (size_t i : stuck.missing) d.missing.push_back(d.ranks[i].rank);
  if (!d.explained())
    for (size_t i : stuck.missing) d.ranks[i].cause = missing_cause(d.ranks[i]);
}

}  // namespace

const char* to_string(RankCause cause) {
  switch (cause) {
    case RankCause::None: return "none";
    case RankCause::Waiting: return "waiting";
    case RankCause::Killed: return "killed";
    case RankCause::Exited: return "exited";
    case RankCause::Dropped: return "dropped";
    case RankCause::Mismatch: return "mismatch";
    case RankCause::OutOfData: return "out-of-data";
    case RankCause::EndedEarly: return "ended-early";
    case RankCause::Missing: return "missing";
    case RankCause::Failed: return "failed";
    case RankCause::Raised: return "raised";
  }
  return "?";
}

std::optional<FingerprintMismatch> mismatch_of(const Event& e) {
  if (e.kind != EventKind::CollectiveMismatch) return std::nullopt;
  const std::span<const int64_t> fields(e.indices);
  const auto mine = fingerprint_from_fields(fields);
  const auto theirs = mine ? fingerprint_from_fields(fields.subspan(kFingerprintFields)) : std::nullopt;
  if (!theirs) return std::nullopt;
  FingerprintMismatch m;
  m.reporter = e.rank;
  m.neighbour = e.src;
  m.reporter_fingerprint = *mine;
  m.neighbour_fingerprint = *theirs;
  return m;
}

const RankDiagnosis* FailureDiagnosis::rank(int r) const {
  return r >= 0 && r < static_cast<int>(ranks.size()) ? &ranks[r] : nullptr;
}

bool FailureDiagnosis::is_culprit(int r) const {
  return std::find(culprits.begin(), culprits.end(), r) != culprits.end();
}

bool FailureDiagnosis::explained() const {
  return std::any_of(ranks.begin(), ranks.end(), [](const RankDiagnosis& rd) { return rd.cause != RankCause::None; });
}

std::vector<PeerPosition> FailureDiagnosis::positions() const {
  std::vector<PeerPosition> out;
  for (const RankDiagnosis& rd : ranks) out.push_back({rd.collective, rd.collective_done, rd.step});
  return out;
}

FailureTracker::RankTrack& FailureTracker::track(int rank) {
  if (static_cast<int>(ranks_.size()) <= rank) ranks_.resize(rank + 1);
  return ranks_[rank];
}

bool FailureTracker::after_stop(const Event& e) const { return stopped_at_ns_ >= 0 && e.t_end_ns >= stopped_at_ns_; }

void FailureTracker::take_error(RankTrack& t, const Event& e) {
  if (t.error.empty()) {
    t.error = e.text;
    if (e.kind == EventKind::Error && e.code >= 0 && e.code <= static_cast<int32_t>(ErrorCode::BadInput))
      t.error_code = static_cast<ErrorCode>(e.code);
  }
  // An error names the step the rank was in when it raised: a script that raises before its
  // step's forward has reported no progress in that step yet, and its last reported step is the
  // one before.
  if (e.step >= 0) t.step = std::max(t.step, e.step);
  errors_.push_back(said_by_rank(e));
  failed_at_ns_ = std::max(failed_at_ns_, e.t_end_ns);
}

void FailureTracker::start_attempt() {
  ranks_.clear();
  flight_->list.clear();
  errors_.clear();
  mismatches_.clear();
  controller_error_.clear();
  failed_at_ns_ = -1;
  stopped_at_ns_ = -1;
}

void FailureTracker::clear() {
  start_attempt();
  world_hint_ = 0;
  restarted_.reset();
  restarts_ = 0;
}

// Uneven inputs without Join hang by design: the rank with fewer batches is the one to blame,
// whatever the flight recorders' line-up says about who waits where.
void FailureTracker::note_uneven(const std::string& job_json) {
  out_of_data_.clear();
  try {
    const JobConfig job = nlohmann::json::parse(job_json).get<JobConfig>();
    if (job.join) return;
    const std::vector<int64_t> removed = parse_uneven(job);
    for (size_t r = 0; r < removed.size(); ++r)
      if (removed[r] > 0) out_of_data_.push_back(static_cast<int>(r));
  } catch (const std::exception&) {
    // No job in the event (a test, an older worker): nothing to learn from it.
  }
}

void FailureTracker::consume(const Event& e) {
  if (e.rank < 0) {  // the controller's own events
    if (e.kind == EventKind::Restart) {
      // The group is restarted from the epoch checkpoint: keep what failed, diagnose anew.
      FailureDiagnosis failed = diagnose(world_hint_);
      failed.restart_number = static_cast<int>(e.value);
      failed.restart_epoch = e.epoch;
      failed.restart_step = e.step;
      restarted_ = std::move(failed);
      ++restarts_;
      start_attempt();
    } else if (e.kind == EventKind::WorldChange) {
      start_attempt();
    } else if (e.kind == EventKind::RunStopped) {
      if (stopped_at_ns_ < 0) stopped_at_ns_ = e.t_end_ns;
    } else if (e.kind == EventKind::Error && !after_stop(e)) {
      if (controller_error_.empty()) controller_error_ = e.text;
      failed_at_ns_ = std::max(failed_at_ns_, e.t_end_ns);
    }
    return;
  }
  if (e.rank >= kMaxWorldSize) return;
  // A chunk's sender was in that collective too, whatever its own events got to say. (Before `t`
  // is taken: tracking the sender may grow the list.)
  if (e.kind == EventKind::ChunkTransfer && e.src >= 0 && e.src < kMaxWorldSize && e.src != e.rank) {
    int64_t& sent_in = track(e.src).chunk_sent_in;
    sent_in = std::max(sent_in, e.collective_id);
  }
  RankTrack& t = track(e.rank);
  if (is_progress(e.kind)) t.last_progress_ns = std::max({t.last_progress_ns, e.t_begin_ns, e.t_end_ns});
  if (is_progress(e.kind) && e.step >= 0) t.step = std::max(t.step, e.step);
  switch (e.kind) {
    case EventKind::RunBegin:
      world_hint_ = static_cast<int>(e.value);
      note_uneven(e.text);
      break;
    case EventKind::CollectiveBegin:
      t.collective = e.collective_id;
      t.collective_text = e.text;
      t.collective_numel = e.bytes / static_cast<int64_t>(sizeof(float));
      t.collective_done = false;
      t.ring_step = -1;
      break;
    case EventKind::CollectiveEnd:
      if (e.collective_id == t.collective) t.collective_done = true;
      break;
    case EventKind::ChunkTransfer:
      // A transfer is reported when it completes: the rank has moved on to the next ring step.
      if (e.collective_id == t.collective && world_hint_ > 1)
        t.ring_step = (e.phase == static_cast<int8_t>(RingPhase::AllGather) ? world_hint_ - 1 : 0) + e.ring_step + 1;
      break;
    case EventKind::Fault:
      if (t.fault.empty()) {
        t.fault = e.text;
        t.fault_kind = fault_kind_of(e);
        t.fault_from_controller = e.src < 0;
        t.fault_step = e.step;
      }
      // A fault at step S is injected before the rank reports any progress in S: it was in S.
      if (e.step >= 0) t.step = std::max(t.step, e.step);
      if (cause_of_fault(fault_kind_of(e)) != RankCause::None) failed_at_ns_ = std::max(failed_at_ns_, e.t_end_ns);
      break;
    case EventKind::CollectiveMismatch:
      if (auto m = mismatch_of(e)) mismatches_.push_back(std::move(*m));
      break;
    case EventKind::RunEnd:  // its training ended normally, whatever the controller did to it after
      if (e.text == "done") t.ended_normally = true;
      break;
    case EventKind::TornDown:  // the controller took the group down: this rank did not fail
      if (e.code != kTornDownFromOutside) {
        t.stopped = true;
        break;
      }
      take_error(t, e);  // a SIGTERM from outside ringlab (kill, scancel): the cause, as its own error would be
      break;
    case EventKind::Error:
      if (after_stop(e)) {
        t.stopped = true;
        break;
      }
      take_error(t, e);
      break;
    case EventKind::FlightRecord:
      if (after_stop(e)) break;  // the others' waits, cut short by the stop that was asked for
      try {
        flight_->list.push_back(nlohmann::json::parse(e.text));
      } catch (const nlohmann::json::exception&) {
      }
      failed_at_ns_ = std::max(failed_at_ns_, e.t_end_ns);
      break;
    default:
      break;
  }
}

void FailureTracker::note_exits(const std::vector<RankExit>& exits) {
  for (const RankExit& x : exits) {
    if (x.rank < 0 || x.rank >= kMaxWorldSize) continue;
    RankTrack& t = track(x.rank);
    if (x.ok()) {
      t.ended_normally = true;
      continue;
    }
    t.exit = x.describe();
    t.exit_is_signal = !x.exited && x.signal != 0 && !x.terminated;
    t.exited_failing = x.exited && x.exit_code != 0 && !x.terminated;  // not the launcher's own SIGTERM
    t.exit_seen_unix_ns = x.seen_unix_ns;
    t.process_stopped = x.was_stopped;
  }
}

// A script's os._exit(3): a failing exit code and no error of its own (asked when diagnosing, not
// when the exit is seen: the error a rank sent before it exited can be read after its exit), so
// the others' lost connections are its echo. A rank that went the same way later, while it waited
// in a collective, is an echo too: its peer's exit broke the collective it waited in.
bool FailureTracker::exited_without_a_word(int rank) const {
  const auto silent = [](const RankTrack& t) { return t.exited_failing && t.error.empty() && !t.stopped; };
  if (rank >= static_cast<int>(ranks_.size()) || !silent(ranks_[rank])) return false;
  const RankTrack& t = ranks_[rank];
  if (t.collective < 0 || t.collective_done || t.exit_seen_unix_ns <= 0) return true;
  return std::none_of(ranks_.begin(), ranks_.end(), [&](const RankTrack& o) {
    return &o != &t && silent(o) && o.exit_seen_unix_ns > 0 && o.exit_seen_unix_ns < t.exit_seen_unix_ns;
  });
}

FailureDiagnosis FailureTracker::diagnose(int world_size) const {
  FailureDiagnosis d;
  const int world = std::clamp(world_size > 0 ? world_size : world_hint_, 0, kMaxWorldSize);
  d.world_size = world;
  d.failed_at_ns = failed_at_ns_;
  d.stopped_at_ns = stopped_at_ns_;
  d.first_error = !errors_.empty() ? errors_.front() : controller_error_;
  d.failed = !errors_.empty() || !flight_->list.empty() || !controller_error_.empty();
  for (int r = 0; r < world; ++r) {
    const RankTrack t = r < static_cast<int>(ranks_.size()) ? ranks_[r] : RankTrack{};
    RankDiagnosis rd;
    rd.rank = r;
    rd.last_progress_ns = t.last_progress_ns;
    rd.step = t.step;
    rd.collective = t.collective;
    rd.op = t.collective < 0 ? "" : t.collective_text == "broadcast" ? "broadcast" : "allreduce";
    rd.collective_done = t.collective_done;
    rd.ring_step = t.ring_step;
    rd.chunk_sent_in = t.chunk_sent_in;
    rd.numel = t.collective_numel;
    rd.fault = t.fault;
    rd.fault_kind = t.fault_kind;
    rd.fault_from_controller = t.fault_from_controller;
    rd.fault_step = t.fault_step;
    rd.exit = t.exit;
    rd.process_stopped = t.process_stopped;
    rd.error = t.error;
    rd.error_code = t.error_code;
    rd.cause = cause_of_fault(t.fault_kind);
    if (t.exit_is_signal && rd.cause != RankCause::Dropped) rd.cause = RankCause::Killed;
    if (exited_without_a_word(r) && rd.cause == RankCause::None) rd.cause = RankCause::Exited;
    // A stopped process took part in nothing since: it is what the others waited for, whatever the
    // line-up says (its neighbours may have finished the collective it stalled and wait in the
    // next, which reads as "missing" from the stalled one).
    if (t.process_stopped && rd.cause == RankCause::None) rd.cause = RankCause::Missing;
    if (rd.cause != RankCause::None) d.failed = true;
    d.ranks.push_back(std::move(rd));
  }
  if (d.failed && !d.explained())
    for (int r : out_of_data_)
      if (r < world) d.ranks[r].cause = RankCause::OutOfData;
  if (d.failed) {
    std::vector<bool> ended_normally;
    for (const RankTrack& t : ranks_) ended_normally.push_back(t.ended_normally);
    mark_ended_early(d, ended_normally);
  }
  if (!flight_->list.empty() && world > 0) {
    const nlohmann::json j = flight_report_json(flight_->list, world);
    d.stuck_collective = j.value("stuck_seq", int64_t{-1});
    d.stuck_op = j.value("stuck_op", std::string());
    d.waiting = j.value("waiting_ranks", std::vector<int>{});
    d.missing = j.value("missing_ranks", std::vector<int>{});
    d.silent = j.value("silent_ranks", std::vector<int>{});
    for (const nlohmann::json& r : j.at("ranks")) {
      const int rank = r.value("rank", -1);
      if (rank >= 0 && rank < world && r.value("reported", false)) take_flight_entry(r.at("last"), d.ranks[rank]);
    }
    // Missing from the collective the others wait in names the culprit only when no rank broke
    // the run on purpose: after a kill, a neighbour one ring step behind is a victim too.
    const bool explained = d.explained();
    for (int r : d.missing)
      if (!explained && r >= 0 && r < world) d.ranks[r].cause = missing_cause(d.ranks[r]);
  }
  place_killed_ranks(d);
  if (!d.failed) return d;
  if (flight_->list.empty()) line_up_last_reports(d);

  for (const RankDiagnosis& rd : d.ranks)
    if (rd.cause != RankCause::None) d.culprits.push_back(rd.rank);
  // Nothing else names a rank, and several raised errors of their own (a script's ranks all
  // failing at one step): each of them is a cause, not only the one whose error came first.
  if (d.culprits.empty() &&
      std::count_if(d.ranks.begin(), d.ranks.end(), [](const RankDiagnosis& r) { return missing_cause(r) == RankCause::Raised; }) > 1)
    for (RankDiagnosis& rd : d.ranks)
      if (missing_cause(rd) == RankCause::Raised) {
        rd.cause = RankCause::Raised;
        d.culprits.push_back(rd.rank);
      }
  if (d.culprits.empty()) {
    // Nothing names a rank: the one that raised the first error, else the one that went quiet first.
    int pick = -1;
    for (int r = 0; r < world && pick < 0; ++r)
      if (!d.ranks[r].error.empty() && d.first_error.rfind(fmt::format("rank {}: ", r), 0) == 0) pick = r;
    for (int r = 0; r < world && pick < 0; ++r)
      if (d.ranks[r].last_progress_ns >= 0 &&
          std::none_of(d.ranks.begin(), d.ranks.end(), [&](const RankDiagnosis& o) {
            return o.last_progress_ns >= 0 && o.last_progress_ns < d.ranks[r].last_progress_ns;
          }))
        pick = r;
    if (pick >= 0) {
      d.ranks[pick].cause = d.ranks[pick].error.empty() ? RankCause::Missing : RankCause::Failed;
      d.culprits.push_back(pick);
    }
  }
  for (RankDiagnosis& rd : d.ranks)
    if (rd.cause == RankCause::None && rd.collective >= 0 && !rd.collective_done) rd.cause = RankCause::Waiting;
  // The first mismatch that names a culprit says best what it called and what the others expected.
  for (FingerprintMismatch m : mismatches_) {
    orient(m, d.culprits);
    if (!d.mismatch || (d.mismatch->culprit < 0 && m.culprit >= 0)) d.mismatch = std::move(m);
  }
  return d;
}

}  // namespace ringlab::view_model

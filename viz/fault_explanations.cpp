#include "viz/fault_explanations.h"

#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/events/ended_early.h"
#include "viz/i18n.h"

namespace ringlab::viz {
namespace {

using view_model::RankCause;
using view_model::RankDiagnosis;

bool injected(const RankDiagnosis& r, FaultKind kind) { return r.fault_kind == kind; }

// The flight recorder's operation names, as the course spells them.
std::string op_name(const std::string& op) {
  if (op == "allreduce") return "all-reduce";
  return op.empty() ? std::string(tr("collective")) : op;
}

bool from_the_app(const RankDiagnosis& r) { return r.fault_from_controller; }

std::string killed_label(const RankDiagnosis& r) {
  if (from_the_app(r)) return tr("killed by SIGKILL from the app");
  if (injected(r, FaultKind::Kill) && r.fault_step >= 0) return trf("killed by SIGKILL at step {}", r.fault_step);
  if (injected(r, FaultKind::Kill)) return tr("killed by SIGKILL");
  return r.exit.empty() ? std::string(tr("its process died")) : r.exit;  // a signal nobody planned
}

std::string mismatch_label(const RankDiagnosis& r) {
  if (injected(r, FaultKind::Skip)) return trf("skipped its all-reduce at step {}", r.fault_step);
  if (injected(r, FaultKind::Extra)) return trf("called an extra all-reduce at step {}", r.fault_step);
  return trf("all-reduced a different size at step {}", r.fault_step);
}

std::string missing_label(const RankDiagnosis& r, const view_model::FailureDiagnosis& f) {
  if (f.stuck_collective < 0) return trf("fell behind: no progress after step {}", r.step);
  const std::string stuck = op_name(f.stuck_op) + " #" + std::to_string(f.stuck_collective);
  if (r.process_stopped)  // where it was is its last report, held back in the stopped process
    return trf("missing from {}: its process was stopped (SIGSTOP or Ctrl-Z)", stuck);
  if (r.collective < 0) return trf("missing from {}", stuck);
  if (r.collective_done) return trf("missing from {}: it last finished {} #{}", stuck, op_name(r.op), r.collective);
  return trf("missing from {}: it is in {} #{}", stuck, op_name(r.op), r.collective);
}

}  // namespace

const char* LabFaultTitle(view_model::LabFault fault) { return tr(view_model::lab_fault_title(fault)); }

namespace {

// "reduce-scatter step 2 of 3": a wrapped line breaks before it or after its phase, never inside
// "step 2 of 3". Held together whole, it was wider than a narrow column (the Failure lab's
// table at 1280x720, in Indonesian or at a larger text size), and Dear ImGui then cut it
// inside a word ("langkah 3 da / ri 3").
std::string unbroken(const std::string& text) {
  std::string out;
  bool first_space = true;
  for (char c : text) {
    if (c == ' ' && !first_space) out += "\u00A0";
    else out += c;
    if (c == ' ') first_space = false;
  }
  return out;
}

// The ring step it was in, counted from 1 within its phase: the words of the report beside it
// (ring_step_words, engine/events), in the window's language.
std::string ring_step_in_words(int ring_step, int world) {
  const int per_phase = world - 1;
  if (ring_step < per_phase) return trf("reduce-scatter step {} of {}", ring_step + 1, per_phase);
  return trf("all-gather step {} of {}", ring_step - per_phase + 1, per_phase);
}

}  // namespace

std::string CollectivePosition(const RankDiagnosis& r, int world) {
  if (r.collective < 0) return tr("no collective yet");
  std::string text = op_name(r.op) + " #" + std::to_string(r.collective);
  const int steps = 2 * (world - 1);
  if (r.position_from_peers && r.process_stopped)
    return text + " · " + tr(r.collective_done ? "done, as the others' positions show: its stopped process held its last events"
                                               : "in it, as the others' positions show: its stopped process held its last events");
  if (r.position_from_peers)
    return text + " · " + tr(r.collective_done ? "done, as the others' positions show: its last events died with it"
                                               : "in it, as the others' positions show: its last events died with it");
  if (r.collective_done) return text + " · " + tr("done");
  if (r.op == "allreduce" && steps > 0 && r.ring_step >= 0 && r.ring_step < steps)
    return text + " · " + unbroken(ring_step_in_words(r.ring_step, world));
  if (r.op == "allreduce") return text + " · " + tr("before its first ring step");
  return text;
}

namespace {

// The collective the others were left in by a rank that ended early: the lowest beyond its last.
int64_t collective_waited_for(const RankDiagnosis& r, const view_model::FailureDiagnosis& f) {
  const std::vector<PeerPosition> ranks = f.positions();
  int64_t lowest = -1;
  for (size_t i : left_waiting(r.collective, ranks))
    if (lowest < 0 || ranks[i].collective < lowest) lowest = ranks[i].collective;
  return lowest;
}

}  // namespace

std::string RankFailureLabel(const RankDiagnosis& r, const view_model::FailureDiagnosis& f) {
  switch (r.cause) {
    case RankCause::None: return "";
    case RankCause::Waiting:
      // The rank whose fingerprint check found the mismatch stopped there, as the table says.
      if (r.error_code == ErrorCode::CollectiveMismatch)
        return trf("saw the mismatch and stopped in {}", CollectivePosition(r, f.world_size));
      return trf("waiting in {}", CollectivePosition(r, f.world_size));
    case RankCause::Killed: return killed_label(r);
    case RankCause::Exited: return trf("ended with {}, raising no error", r.exit);
    case RankCause::Dropped: return trf("closed its connections at step {}", r.fault_step);
    case RankCause::Mismatch: return mismatch_label(r);
    case RankCause::Missing: return missing_label(r, f);
    case RankCause::OutOfData:
      return r.collective >= 0 ? trf("out of data: it left training and is in {} #{}", op_name(r.op), r.collective)
                               : std::string(tr("out of data: it left training"));
    case RankCause::Failed: return trf("stuck at {}: it raised the first error", CollectivePosition(r, f.world_size));
    case RankCause::Raised: {  // its words without the "rank N: " they begin with: the row says whose
      const std::string own = fmt::format("rank {}: ", r.rank);
      return trf("raised an error of its own: {}", r.error.rfind(own, 0) == 0 ? r.error.substr(own.size()) : r.error);
    }
    case RankCause::EndedEarly:
      return r.collective >= 0 ? trf("ended its training after {} #{}: it never joined the next one", op_name(r.op),
                                     r.collective)
                               : std::string(tr("ended its training before any collective"));
  }
  return "";
}

std::string RankOutcome(const RankDiagnosis& r, const view_model::FailureDiagnosis& f) {
  if (f.is_culprit(r.rank)) return RankFailureLabel(r, f);
  if (r.error_code) {
    switch (*r.error_code) {
      case ErrorCode::CollectiveMismatch: return tr("saw the mismatch and stopped");
      case ErrorCode::Timeout: return tr("timed out waiting for a peer");
      case ErrorCode::PeerClosed: return tr("lost its connection to a peer");
      case ErrorCode::BadInput: case ErrorCode::Other: return tr("raised an error");
    }
  }
  if (r.cause == RankCause::Waiting) return tr("left waiting for it");
  return tr("stopped with the others");
}

std::string FailureHeadline(const view_model::FailureDiagnosis& f) {
  if (f.culprits.empty()) return tr("The run failed");
  const RankDiagnosis& r = f.ranks[f.culprits.front()];
  switch (r.cause) {
    case RankCause::Killed:
      if (from_the_app(r)) return trf("Rank {} was killed by SIGKILL from the app", r.rank);
      if (r.fault_step >= 0) return trf("Rank {} was killed by SIGKILL at step {}", r.rank, r.fault_step);
      return trf("Rank {} died: {}", r.rank, killed_label(r));
    case RankCause::Exited: return trf("Rank {} ended with {}, raising no error", r.rank, r.exit);
    case RankCause::Dropped: return trf("Rank {} dropped its connections at step {}", r.rank, r.fault_step);
    case RankCause::Mismatch:
      if (injected(r, FaultKind::Resize))
        return trf("Rank {} all-reduced a different size at step {}: the fingerprint check stopped the run", r.rank,
                   r.fault_step);
      return trf("Rank {} broke the order of collectives at step {}: the fingerprint check stopped the run", r.rank,
                 r.fault_step);
    case RankCause::Missing:
      if (f.stuck_collective >= 0 && r.process_stopped)
        return trf("Rank {} never joined {} #{}: its process was stopped (SIGSTOP or Ctrl-Z), and the others waited "
                   "until the timeout", r.rank, op_name(f.stuck_op), f.stuck_collective);
      if (f.stuck_collective >= 0)
        return trf("Rank {} never joined {} #{}: the others waited until the timeout", r.rank, op_name(f.stuck_op),
                   f.stuck_collective);
      return trf("Rank {} fell behind and the run timed out", r.rank);
    case RankCause::OutOfData: return trf("Rank {} ran out of data: the others waited for it until the timeout", r.rank);
    case RankCause::Failed: return trf("Rank {} failed first", r.rank);
    case RankCause::Raised:
      if (f.culprits.size() > 1) return trf("Ranks {} raised errors of their own", fmt::format("{}", fmt::join(f.culprits, ", ")));
      return trf("Rank {} raised an error of its own", r.rank);
    case RankCause::EndedEarly:
      return trf("Rank {} ended one collective early: the others waited for it in {} #{}", r.rank, op_name(r.op),
                 collective_waited_for(r, f));
    case RankCause::None:
    case RankCause::Waiting: break;
  }
  return tr("The run failed");
}

std::string LabLesson(const view_model::FailureLabSettings& lab, int world) {
  return view_model::render_lesson(tr(view_model::lab_lesson(lab.fault, lab.join)), lab, world);
}

std::string LabRestartLesson(const view_model::FailureLabSettings& lab, int world) {
  const char* text = view_model::lab_restart_lesson(lab.fault, lab.max_restarts);
  return *text ? view_model::render_lesson(tr(text), lab, world) : std::string();
}

std::string FingerprintText(const CollectiveFingerprint& f) {
  if (f.bucket == kStopVoteBucket) return trf("the stop vote before step {}", f.step);
  const std::string what = f.bucket >= 0            ? trf("bucket {}", f.bucket)
                           : f.bucket == kDemoBucket ? std::string(tr("the demo tensor"))
                                                     : std::string(tr("an extra collective"));
  return trf(f.op == 2 ? "#{} broadcast of {} ({} floats) at step {}" : "#{} all-reduce of {} ({} floats) at step {}",
             f.seq, what, f.numel, f.step);
}

}  // namespace ringlab::viz

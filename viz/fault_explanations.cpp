#include "viz/fault_explanations.h"

#include "viz/i18n.h"

namespace ringlab::viz {
namespace {

using replay::RankCause;
using replay::RankDiagnosis;

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// The flight recorder's operation names, as the course spells them.
std::string op_name(const std::string& op) {
  if (op == "allreduce") return "all-reduce";
  return op.empty() ? std::string(tr("a collective")) : op;
}

bool from_the_app(const RankDiagnosis& r) { return r.fault.find("from the controller") != std::string::npos; }

std::string killed_label(const RankDiagnosis& r) {
  if (from_the_app(r)) return tr("killed by SIGKILL from the app");
  if (starts_with(r.fault, "kill") && r.fault_step >= 0) return trf("killed by SIGKILL at step {}", r.fault_step);
  if (starts_with(r.fault, "kill")) return tr("killed by SIGKILL");
  return r.exit.empty() ? std::string(tr("its process died")) : r.exit;  // a signal nobody planned
}

std::string mismatch_label(const RankDiagnosis& r) {
  if (starts_with(r.fault, "skip")) return trf("skipped its all-reduce at step {}", r.fault_step);
  if (starts_with(r.fault, "extra")) return trf("called an extra all-reduce at step {}", r.fault_step);
  return trf("all-reduced a different size at step {}", r.fault_step);
}

std::string missing_label(const RankDiagnosis& r, const replay::FailureDiagnosis& f) {
  if (f.stuck_collective < 0) return trf("fell behind: no progress after step {}", r.step);
  const std::string stuck = op_name(f.stuck_op) + " #" + std::to_string(f.stuck_collective);
  if (r.collective < 0) return trf("missing from {}", stuck);
  return trf("missing from {}: it is in {} #{}", stuck, op_name(r.op), r.collective);
}

}  // namespace

const char* LabFaultTitle(replay::LabFault fault) { return tr(replay::lab_fault_title(fault)); }

std::string CollectivePosition(const RankDiagnosis& r, int world) {
  if (r.collective < 0) return tr("no collective yet");
  std::string text = op_name(r.op) + " #" + std::to_string(r.collective);
  const int steps = 2 * (world - 1);
  if (r.collective_done) return text + " · " + tr("done");
  if (r.op == "allreduce" && steps > 0 && r.ring_step >= 0 && r.ring_step < steps)
    return text + " · " + trf("ring step {} of {}", r.ring_step + 1, steps);
  if (r.op == "allreduce") return text + " · " + tr("before its first ring step");
  return text;
}

std::string RankFailureLabel(const RankDiagnosis& r, const replay::FailureDiagnosis& f) {
  switch (r.cause) {
    case RankCause::None: return "";
    case RankCause::Waiting: return trf("waiting in {}", CollectivePosition(r, f.world_size));
    case RankCause::Killed: return killed_label(r);
    case RankCause::Dropped: return trf("closed its connections at step {}", r.fault_step);
    case RankCause::Mismatch: return mismatch_label(r);
    case RankCause::Missing: return missing_label(r, f);
    case RankCause::OutOfData:
      return r.collective >= 0 ? trf("out of data: it left training and is in {} #{}", op_name(r.op), r.collective)
                               : std::string(tr("out of data: it left training"));
    case RankCause::Failed: return trf("stuck at {}: it raised the first error", CollectivePosition(r, f.world_size));
  }
  return "";
}

std::string RankOutcome(const RankDiagnosis& r, const replay::FailureDiagnosis& f) {
  if (f.is_culprit(r.rank)) return RankFailureLabel(r, f);
  const std::string& e = r.error;
  if (e.find("mismatched collectives") != std::string::npos) return tr("saw the mismatch and stopped");
  if (e.find("Timed out") != std::string::npos || e.find("timed out") != std::string::npos)
    return tr("timed out waiting for a peer");
  if (e.find("onnection closed") != std::string::npos || e.find("reset by peer") != std::string::npos)
    return tr("lost its connection to a peer");
  if (!e.empty()) return tr("raised an error");
  if (r.cause == RankCause::Waiting) return tr("left waiting for it");
  return tr("stopped with the others");
}

std::string FailureHeadline(const replay::FailureDiagnosis& f) {
  if (f.culprits.empty()) return tr("The run failed");
  const RankDiagnosis& r = f.ranks[f.culprits.front()];
  switch (r.cause) {
    case RankCause::Killed:
      if (from_the_app(r)) return trf("Rank {} was killed by SIGKILL from the app", r.rank);
      if (r.fault_step >= 0) return trf("Rank {} was killed by SIGKILL at step {}", r.rank, r.fault_step);
      return trf("Rank {} died: {}", r.rank, killed_label(r));
    case RankCause::Dropped: return trf("Rank {} dropped its connections at step {}", r.rank, r.fault_step);
    case RankCause::Mismatch:
      if (starts_with(r.fault, "resize"))
        return trf("Rank {} all-reduced a different size at step {}: the fingerprint check stopped the run", r.rank,
                   r.fault_step);
      return trf("Rank {} broke the order of collectives at step {}: the fingerprint check stopped the run", r.rank,
                 r.fault_step);
    case RankCause::Missing:
      if (f.stuck_collective >= 0)
        return trf("Rank {} never joined {} #{}: the others waited until the timeout", r.rank, op_name(f.stuck_op),
                   f.stuck_collective);
      return trf("Rank {} fell behind and the run timed out", r.rank);
    case RankCause::OutOfData: return trf("Rank {} ran out of data: the others waited for it until the timeout", r.rank);
    case RankCause::Failed: return trf("Rank {} failed first", r.rank);
    case RankCause::None:
    case RankCause::Waiting: break;
  }
  return tr("The run failed");
}

std::string LabLesson(const replay::FailureLabSettings& lab, int world) {
  return replay::render_lesson(tr(replay::lab_lesson(lab.fault, lab.join)), lab, world);
}

std::string LabRestartLesson(const replay::FailureLabSettings& lab, int world) {
  const char* text = replay::lab_restart_lesson(lab.fault, lab.max_restarts);
  return *text ? replay::render_lesson(tr(text), lab, world) : std::string();
}

}  // namespace ringlab::viz

#include "engine/view_model/failure_lab.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/core.h>

#include "engine/job/fault_plan.h"

namespace ringlab::view_model {
namespace {

// The token `--fault` takes for the lab's fault ("" for none and for uneven inputs).
std::string fault_token(const FailureLabSettings& lab) {
  switch (lab.fault) {
    case LabFault::Kill: return fmt::format("kill:{}@{}", lab.rank, lab.step);
    case LabFault::Delay: return fmt::format("delay:{}:{}", lab.rank, lab.delay_ms);
    case LabFault::Drop: return fmt::format("drop:{}@{}", lab.rank, lab.step);
    case LabFault::Skip: return fmt::format("skip:{}@{}", lab.rank, lab.step);
    case LabFault::Extra: return fmt::format("extra:{}@{}", lab.rank, lab.step);
    case LabFault::Resize: return fmt::format("resize:{}@{}", lab.rank, lab.step);
    case LabFault::None:
    case LabFault::Uneven: return "";
  }
  return "";
}

LabFault lab_fault_of(FaultKind kind) {
  switch (kind) {
    case FaultKind::Kill: return LabFault::Kill;
    case FaultKind::Delay: return LabFault::Delay;
    case FaultKind::Drop: return LabFault::Drop;
    case FaultKind::Skip: return LabFault::Skip;
    case FaultKind::Extra: return LabFault::Extra;
    case FaultKind::Resize: return LabFault::Resize;
  }
  return LabFault::None;
}

// A rank that breaks the contract fails the run; only a straggler or Join lets it finish.
bool fails_the_run(LabFault fault, bool join) {
  if (fault == LabFault::None || fault == LabFault::Delay) return false;
  return !(fault == LabFault::Uneven && join);
}

std::string timeout_text(double seconds) {
  return seconds == std::floor(seconds) ? fmt::format("{:.0f}", seconds) : fmt::format("{:g}", seconds);
}

}  // namespace

const char* lab_fault_title(LabFault fault) {
  switch (fault) {
    case LabFault::None: return "No fault";
    case LabFault::Kill: return "Kill a rank (SIGKILL)";
    case LabFault::Delay: return "Straggler (delay every step)";
    case LabFault::Drop: return "Drop a rank's connections";
    case LabFault::Skip: return "Skip an all-reduce";
    case LabFault::Extra: return "An extra all-reduce";
    case LabFault::Resize: return "A different tensor size";
    case LabFault::Uneven: return "Uneven inputs";
  }
  return "";
}

void apply_lab(const FailureLabSettings& lab, double quiet_timeout_s, JobConfig& job) {
  FailureLabSettings l = lab;
  l.rank = std::clamp(l.rank, 0, std::max(job.world_size - 1, 0));
  job.faults.clear();
  job.uneven.clear();
  job.join = false;
  if (l.fault == LabFault::None) {
    job.timeout_s = quiet_timeout_s;
    return;
  }
  job.timeout_s = l.timeout_s;
  if (l.fault == LabFault::Uneven) {
    job.uneven.push_back(fmt::format("{}:{}", l.rank, std::max<int64_t>(l.batches, 0)));
    job.join = l.join;
  } else {
    job.faults.push_back(fault_token(l));
  }
}

FailureLabSettings lab_from_job(const JobConfig& job) {
  FailureLabSettings lab;
  lab.timeout_s = job.timeout_s;
  lab.join = job.join;
  try {
    const std::vector<Fault> faults = parse_faults(job);
    if (!faults.empty()) {
      const Fault& f = faults.front();
      lab.fault = lab_fault_of(f.kind);
      lab.rank = f.rank;
      if (f.kind == FaultKind::Delay) lab.delay_ms = static_cast<int>(f.delay_ms);
      else lab.step = f.step;
      return lab;
    }
    const std::vector<int64_t> removed = parse_uneven(job);
    for (size_t r = 0; r < removed.size(); ++r)
      if (removed[r] > 0) {
        lab.fault = LabFault::Uneven;
        lab.rank = static_cast<int>(r);
        lab.batches = removed[r];
        return lab;
      }
  } catch (const std::exception&) {
    // A job the lab cannot describe opens with no fault; Start will report what is wrong.
  }
  // A job with no fault keeps a timeout shorter than the lab's own (a scenario's "timeout_s": 3,
  // which choosing a fault replaced with 6 s); a longer one, the default 60 s, would make a lesson
  // wait a minute.
  lab.timeout_s = std::min(job.timeout_s, FailureLabSettings{}.timeout_s);
  return lab;
}

std::string lab_command_line(const FailureLabSettings& lab, const JobConfig& job) {
  std::string cmd = fmt::format("ringlab run -n {}", job.world_size);
  if (job.backend != "gloo") cmd += " --backend " + job.backend;
  cmd += fmt::format(" --epochs {}", job.epochs);
  JobConfig applied = job;
  apply_lab(lab, job.timeout_s, applied);
  for (const std::string& f : applied.faults) cmd += " --fault " + f;
  for (const std::string& u : applied.uneven) cmd += " --uneven " + u;
  if (applied.join) cmd += " --join";
  if (lab.fault != LabFault::None) cmd += " --timeout " + timeout_text(lab.timeout_s);
  if (lab.max_restarts > 0) cmd += fmt::format(" --max-restarts {}", lab.max_restarts);
  return cmd;
}

const char* lab_lesson(LabFault fault, bool join) {
  switch (fault) {
    case LabFault::None:
      return "No fault: every rank calls the same collectives, in the same order, with the same sizes, so every "
             "all-reduce finds all its partners. Choose a fault to see what happens when one rank breaks that contract.";
    case LabFault::Kill:
      return "Rank {rank} dies by SIGKILL at step {step}, like a machine losing power. Its ring neighbours' sends and "
             "receives fail (gloo: connection closed by peer; NCCL would wait until its watchdog timeout). The "
             "controller, like torchrun's agent, sees the process die and tears the whole group down; the report "
             "names the dead rank and the all-reduce every other rank was waiting in. The others may get a ring step "
             "or two further first: a rank moves on once its own chunk has arrived, and what it sent to rank {rank} "
             "was never received, so that link shows no bytes.";
    case LabFault::Delay:
      return "Rank {rank} sleeps {ms} ms at every step: a straggler. An all-reduce cannot finish before the slowest "
             "rank has sent its chunks, so the other ranks wait for it inside every all-reduce. In the timeline rank "
             "{rank}'s sleep is its striped red bar (injected delay); the others' all-reduce bars under their backward "
             "passes are striped (waiting): about {ms} ms of every step spent waiting for rank {rank} to arrive. Nothing fails: every "
             "step just costs the slowest rank's time.";
    case LabFault::Drop:
      return "Rank {rank} closes its connections at step {step}, as if its network cable were pulled. Every rank, "
             "itself included, then fails its next send or receive in the same all-reduce with 'connection closed by "
             "peer': the flight recorders show all of them in that collective, none missing, so they cannot say who "
             "broke the link. The fault event does: rank {rank}. The controller tears the group down.";
    case LabFault::Skip:
      return "Rank {rank} leaves out its gradient all-reduce at step {step}, as a rank that takes another branch of an "
             "if would. From then on its collectives are one behind: its next all-reduce would be summed with the "
             "others' all-reduce of another step. PyTorch does not notice by default (it mixes wrong gradients or "
             "hangs); with TORCH_DISTRIBUTED_DEBUG=DETAIL it compares each collective's fingerprint first. ringlab "
             "always does: before any gradient moves, each rank sends its ring neighbour the fingerprint (number, "
             "step, operation, bucket, size) and stops on a mismatch.";
    case LabFault::Extra:
      return "Rank {rank} calls one all-reduce more than the others at step {step}. Its collectives are now one ahead: "
             "its collective #N is the extra one, while #N on the other ranks is a bucket of gradients. Summing them "
             "would mix unrelated tensors; the fingerprint check stops the run first and shows both fingerprints.";
    case LabFault::Resize:
      return "At step {step} rank {rank} all-reduces one element fewer than the others: the same collective with a "
             "different tensor size, as when the model differs between ranks. NCCL would read past the end of the "
             "shorter buffer or hang; the fingerprint check catches the size difference first and names both sizes.";
    case LabFault::Uneven:
      if (join)
        return "Rank {rank} gets {batches} fewer per epoch, but training runs under PyTorch's Join. Every "
               "step the ranks first all-reduce a flag: how many still have data? A rank out of data shadows the "
               "others: it joins their gradient all-reduce with zeros, so every collective finds all its partners. "
               "At the end of the epoch every replica takes the model of the rank with the most batches. The run "
               "completes.";
      return "Rank {rank} gets {batches} fewer per epoch than the others. When it runs out it leaves the "
             "training loop, while the others start one more step and wait in its all-reduce for a partner that "
             "never comes. With more than one epoch it is worse: its next epoch's all-reduces first pair silently "
             "with the others' remaining ones, summing gradients of different epochs. Nothing crashes: the run hangs "
             "until the timeout ({timeout} s). Then every rank's flight recorder (like PyTorch's NCCL flight "
             "recorder) is lined up to show who waits in which collective. Tick Join to fix it.";
  }
  return "";
}

const char* lab_restart_lesson(LabFault fault, int max_restarts) {
  if (fault == LabFault::Uneven)
    return max_restarts > 0 ? "A restart does not help here: the data is still uneven, so the new group hangs at "
                              "the same place."
                            : "";
  if (!fails_the_run(fault, false)) return "";
  if (max_restarts <= 0)
    return "Max restarts 0: the run ends with the failure, as torchrun --max-restarts 0 would end it.";
  return "Max restarts {restarts}: like torchrun's elastic agent, the controller starts a fresh group of {world} "
         "processes that resumes from the last epoch checkpoint (model and optimizer). The fault happened once, so the "
         "new group trains on, and because each epoch's data order is seeded the run ends bit-identical to one "
         "that was never interrupted.";
}

std::string render_lesson(const char* text, const FailureLabSettings& lab, int world_size) {
  if (!text || !*text) return "";
  try {
    return fmt::format(fmt::runtime(text), fmt::arg("rank", lab.rank), fmt::arg("step", lab.step),
                       fmt::arg("ms", lab.delay_ms),
                       fmt::arg("batches", fmt::format("{} batch{}", lab.batches, lab.batches == 1 ? "" : "es")),
                       fmt::arg("timeout", timeout_text(lab.timeout_s)), fmt::arg("world", world_size),
                       fmt::arg("restarts", lab.max_restarts));
  } catch (const std::runtime_error&) {  // fmt::format_error
    return text;  // a translation with a broken field still says something
  }
}

}  // namespace ringlab::view_model

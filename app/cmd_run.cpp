// `ringlab run`: the controller, headless. Starts one worker process per rank (like torchrun),
// prints the seed script's report from rank 0's view, and exits non-zero if any rank failed.
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "app/commands.h"
#include "app/job_flags.h"
#include "app/run_report.h"
#include "app/torch_script.h"
#include "engine/core/error.h"
#include "engine/core/output_file.h"
#include "engine/ddp/bucket_plan.h"
#include "engine/dist/process_group.h"
#include "engine/export/chrome_trace.h"
#include "engine/control/controller.h"
#include "engine/control/interrupt_signals.h"
#include "engine/control/join_file.h"
#include "engine/control/step_silence.h"
#include "engine/control/suspend_signal.h"
#include "engine/job/epoch_shape.h"
#include "engine/job/fault_plan.h"
#include "engine/events/rank_exit.h"
#include "engine/net/endpoint.h"
#include "engine/net/socket.h"
#include "engine/export/metrics_csv.h"
#include "engine/net/ports.h"
#include "engine/job/scenario.h"
#include "engine/nn/mlp.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace ringlab::app {
namespace {

// A fault planned for a step the run never reaches does nothing: said before the run, not
// discovered after it trained normally. (A PyTorch script decides its own steps: not checked.)
void note_faults_that_never_fire(const JobConfig& job) {
  const int64_t steps = job.epochs * epoch_shape(job).steps;
  for (const Fault& f : parse_faults(job)) {
    if (f.kind != FaultKind::Delay && f.step >= steps)
      std::fprintf(stderr, "ringlab run: note: --fault %s never fires: this run's steps are 0 to %lld\n",
                   to_string(f).c_str(), static_cast<long long>(steps - 1));
    // What these faults show is another rank's answer to them: a rank alone trains on unmoved.
    else if (job.world_size == 1 && f.kind != FaultKind::Kill)
      std::fprintf(stderr, "ringlab run: note: --fault %s shows nothing with one rank: no other rank waits for it, "
                   "nor compares collectives with it (-n 2 or more)\n", to_string(f).c_str());
  }
}

// --uneven R:K takes K batches an epoch from rank R's share: a K as large as the share leaves the
// rank none (and a larger K means nothing more). Said before the run, where a person can see it.
void note_uneven_inputs(const JobConfig& job) {
  const int64_t batches = epoch_shape(job).steps;
  const std::vector<int64_t> removed = parse_uneven(job);
  for (size_t rank = 0; rank < removed.size(); ++rank)
    if (removed[rank] >= batches && batches > 0)
      std::fprintf(stderr, "ringlab run: note: --uneven takes %lld batches an epoch from rank %zu, which has %lld: it "
                   "gets none%s\n", static_cast<long long>(removed[rank]), rank, static_cast<long long>(batches),
                   job.join ? "" : ", and without --join the others wait for it until the timeout");
}

// A sampler that leaves every rank no sample trains no step, as PyTorch's DistributedSampler
// would: the epochs then print the same MSE over and over. Said before the run.
void note_no_steps(const JobConfig& job) {
  if (job.epochs == 0 || epoch_shape(job).steps > 0) return;
  std::fprintf(stderr, "ringlab run: note: %lld samples over %d ranks%s leave each rank no batch: no step trains, "
               "and every epoch's MSE is the first one's\n", static_cast<long long>(job.samples), job.world_size,
               job.drop_last ? " with --drop-last" : "");
}

// The buckets a step all-reduces once DDP has rebuilt them (after the first step).
int buckets_per_step(const JobConfig& job) {
  const nn::Mlp model(job.features, job.hidden, 1);
  return static_cast<int>(ddp::plan_buckets(model.parameter_views(), job.bucket_limits(), true).size());
}

// A trace keeps every span: about a kilobyte per rank and step, and at --trace-level chunks
// about 0.4 KB more per rank, step and bucket for each other rank (a ring's 2(p-1) chunk
// transfers, sent and received; the native algorithm has none). Measured on the seed's job at 4
// ranks: 13 KB a step with one bucket, 23 KB with two (--bucket-cap-kb 4 --first-bucket-kb 4),
// 3.9 KB with steps only. A long run's trace is gigabytes, written at the end: said before the
// run, with the room its folder has.
void note_trace_size(const JobConfig& job, const std::string& path, bool quiet) {
  if (path.empty() || job.trace_level == "none") return;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) return;  // /dev/null, a pipe: no room to run out of
  const bool chunks = job.trace_level == "chunks" && job.algorithm == "ring";
  const double world = job.world_size, steps = static_cast<double>(epoch_shape(job).steps) * job.epochs;
  const double chunk_bytes = chunks ? 2.0 * (world - 1) * 400.0 * buckets_per_step(job) : 0.0;
  const double per_step = world * (1000.0 + chunk_bytes);
  const double bytes = per_step * steps;
  const auto sized = [](double b) {
    return b >= 1e9 ? fmt::format("{:.1f} GB", b / 1e9) : b >= 1e6 ? fmt::format("{:.0f} MB", b / 1e6) : fmt::format("{:.0f} KB", b / 1e3);
  };
  struct statvfs fs {};
  const std::string dir = std::filesystem::path(path).parent_path().string();
  const bool known = ::statvfs(dir.empty() ? "." : dir.c_str(), &fs) == 0;
  const double free_bytes = known ? static_cast<double>(fs.f_bavail) * static_cast<double>(fs.f_frsize) : 0;
  const bool short_of_room = known && bytes > free_bytes;
  if (!short_of_room && (quiet || bytes < 1e9)) return;
  std::string note = fmt::format("ringlab run: note: --trace for {} steps at {} rank{} will take about {} ({} a step",
                                 static_cast<int64_t>(steps), job.world_size, job.world_size == 1 ? "" : "s", sized(bytes), sized(per_step));
  note += chunks ? fmt::format("; --trace-level steps: about {} a step)", sized(world * 1000.0)) : ")";
  if (short_of_room)
    note += fmt::format(", more than the {} free where it goes: if it does not fit, the whole trace is written to a "
                        "temporary folder instead, where one has room",
                        sized(free_bytes));
  std::fprintf(stderr, "%s\n", note.c_str());
}

struct RunFlags {
  JobFlags job;
  std::string report, trace, metrics, flight_dump, scenario;
  int max_restarts = 0;
  bool quiet = false;
  int node_rank = 0;
  std::string master_addr = "127.0.0.1";
  std::string hosts, hostfile, launcher = "auto";
  int master_port = 0;
  std::string join_file, run_id;
  std::string torch_script;
  std::vector<std::string> torch_args;
};

bool given(const JobFlags& f, const char* flag) { return f.cmd && f.cmd->count(flag) > 0; }

// A joining node takes node 0's address, port, shape, run id and token from the join file. A flag
// given as well must say the same: two sources that disagree are a mistake, not a choice.
void take_from_join_file(RunFlags& f, const JoinInfo& info) {
  auto agree = [&](const char* flag, const std::string& mine, const std::string& theirs) {
    if (given(f.job, flag) && mine != theirs)
      throw InputError(fmt::format("{} {} disagrees with the join file's {} (leave the flag out)", flag, mine, theirs));
  };
  agree("--master-addr", f.master_addr, info.master_addr);
  agree("--master-port", std::to_string(f.master_port), std::to_string(info.master_port));
  agree("--nnodes", std::to_string(f.job.nnodes), std::to_string(info.nnodes));
  agree("--nproc-per-node", std::to_string(f.job.nproc_per_node), std::to_string(info.nproc_per_node));
  agree("--run-id", f.run_id, info.run_id);
  f.master_addr = info.master_addr;
  f.master_port = info.master_port;
  f.job.nnodes = info.nnodes;
  f.job.nproc_per_node = info.nproc_per_node;
  f.job.job.world_size = info.nnodes * info.nproc_per_node;
  f.run_id = info.run_id;
}

// With --torch the script decides its model, data and training: ringlab's flags for them would
// be silently ignored (and `--epochs 3` meant for the script, given without `--`, lost).
void refuse_job_flags_with_torch(const RunFlags& f) {
  for (const char* flag : {"--samples", "--hidden", "--batch-size", "--lr", "--momentum", "--weight-decay", "--seed",
                           "--epochs", "--drop-last", "--no-shuffle", "--forget-set-epoch", "--bucket-cap-kb",
                           "--first-bucket-kb", "--grad-accum"})
    if (given(f.job, flag))
      throw InputError(fmt::format("{} is the script's to decide with --torch (ringlab would ignore it); the script's "
                                   "own arguments go after --: ringlab run --torch SCRIPT -n N -- {} ...", flag, flag));
  // Faults, uneven inputs, Join and the collective check are built into ringlab's own workers: a
  // script has none of them, whatever arguments it takes.
  for (const char* flag : {"--fault", "--uneven", "--join", "--no-collective-check"})
    if (given(f.job, flag))
      throw InputError(fmt::format("{} works on ringlab's own workers only: with --torch the script trains and ringlab "
                                   "watches it; without --torch, ringlab run -n N {} ... runs it on ringlab's job", flag, flag));
  if (!f.scenario.empty()) throw InputError("--scenario describes ringlab's own job; with --torch the script is the job");
}

// The token of a multi-node run: node 0's own (RINGLAB_TOKEN, else a fresh one), and for a node
// that joins, the join file's or RINGLAB_TOKEN. Never a flag: `ps` shows command lines to all.
std::string run_token(const std::optional<JoinInfo>& joined) {
  if (joined) return joined->token;
  const char* env = std::getenv("RINGLAB_TOKEN");
  return env ? env : "";
}

// Bad output paths are bad input: refuse them before any process starts, rather than after the
// whole run. Each is opened the way it will be written (a temporary file beside it, or the device
// itself), because permission checks alone pass paths that cannot be created (/proc/x as root).
// Two outputs on one path would silently keep only the one written last.
void check_outputs(const RunFlags& f) {
  check_output_paths({{f.report, "--report"}, {f.trace, "--trace"}, {f.metrics, "--metrics"},
                      {f.flight_dump, "--dump-flight-recorder"}});
}

// Connections the run's servers refused or lost: a wrong token or a garbled frame is somebody
// else talking to this run, worth a line even when training succeeded. (A worker stopped in the
// middle of a request after a failure shows up here too, as a client that hung up.)
void print_connection_errors(const RunResult& r) {
  if (r.connection_errors.empty()) return;
  std::fprintf(stderr, "ringlab run: %zu connection(s) to the run's store or event server ended in an error:\n",
               r.connection_errors.size());
  const size_t shown = std::min<size_t>(r.connection_errors.size(), 5);
  for (size_t i = 0; i < shown; ++i) std::fprintf(stderr, "  %s\n", r.connection_errors[i].c_str());
  if (shown < r.connection_errors.size())
    std::fprintf(stderr, "  ... and %zu more (see --report)\n", r.connection_errors.size() - shown);
}

// A one-line progress bar on a terminal; silent otherwise. Drawn by the thread that watches the
// run, which also prints the report's lines as they come: above the bar, which it clears first.
class ProgressBar {
 public:
  ProgressBar(int64_t total_steps, bool enabled) : total_(total_steps), enabled_(enabled && ::isatty(STDERR_FILENO)) {}
  ~ProgressBar() { clear(); }
  void draw(int64_t steps) {
    if (!enabled_) return;
    const double frac = total_ > 0 ? std::min(1.0, double(steps) / double(total_)) : 0.0;
    const int width = 30, filled = static_cast<int>(frac * width);
    std::fprintf(stderr, "\r[%s%s] step %lld/%lld", std::string(filled, '#').c_str(),
                 std::string(width - filled, '.').c_str(), static_cast<long long>(steps),
                 static_cast<long long>(total_));
    std::fflush(stderr);
    shown_ = true;
  }
  void clear() {
    if (shown_) std::fprintf(stderr, "\r\033[K");
    shown_ = false;
  }

 private:
  int64_t total_;
  bool enabled_;
  bool shown_ = false;
};

// Where the run's events go besides the controller's own result: only what an asked-for output
// needs. Both fold events as they arrive and keep what they have written on disk, so neither
// grows the controller's memory with the length of the run.
class RunOutputs : public EventSink {
 public:
  RunOutputs(bool trace, bool metrics, LiveReport* live, std::vector<int> ranks_per_node) : live_(live) {
    if (trace) trace_ = std::make_unique<ChromeTraceWriter>(std::move(ranks_per_node));
    if (metrics) metrics_ = std::make_unique<MetricsCsvWriter>();
  }
  void emit(Event event) override {  // the controller calls this under its lock, one at a time
    if (live_) live_->emit(event);
    if (metrics_) metrics_->emit(event);
    if (trace_) trace_->emit(std::move(event));
  }
  void write_trace(const std::string& path) {
    if (trace_) trace_->write(path, "--trace");
  }
  void write_metrics(const std::string& path) {
    if (metrics_) metrics_->write(path, "--metrics");
  }

 private:
  LiveReport* live_;
  std::unique_ptr<ChromeTraceWriter> trace_;
  std::unique_ptr<MetricsCsvWriter> metrics_;
};

// The tasks of the Slurm allocation this runs in (SLURM_NTASKS, which `salloc -n 4` sets); 1
// when it says none.
int allocation_tasks() {
  const char* tasks = std::getenv("SLURM_NTASKS");
  int n = 0;
  if (!tasks || std::sscanf(tasks, "%d", &n) != 1 || n < 1) return 1;
  return n;
}

// "rank 2 starts here", "ranks 2 to 3 start here".
std::string ranks_start_here(const ControllerOptions& o) {
  const int first = o.node_rank * o.nproc_per_node(), last = first + o.nproc_per_node() - 1;
  return first == last ? fmt::format("rank {} starts here", first) : fmt::format("ranks {} to {} start here", first, last);
}

// The job fields this joining node's flags set otherwise than node 0's job, by their names in a
// report, each with node 0's value: "epochs 9 (node 0's: 300)". They are the flags laid on node
// 0's job as a scenario's are (JobFlags::resolve_onto), so every job flag is covered.
std::vector<std::string> flags_node0_overrides(JobFlags& flags, const JobConfig& node0) {
  nlohmann::json theirs = node0, mine;
  try {
    mine = flags.resolve_onto(node0);
  } catch (const Error& e) {  // this node's flags do not fit node 0's job: all the more not used
    return {e.what()};
  }
  std::vector<std::string> differ;
  for (const auto& [key, value] : mine.items())
    if (!theirs.contains(key) || theirs.at(key) != value)
      differ.push_back(fmt::format("{} {} (node 0's: {})", key, value.dump(), theirs.value(key, nlohmann::json()).dump()));
  return differ;
}

// A joining node, once node 0 took it in: whose run it joined and what that run is (node 0's
// job, whatever this node's own job flags said: those that differ are named).
void say_joined(const Controller& controller, JobFlags& flags) {
  const ControllerOptions& o = controller.options();
  std::fprintf(stderr, "ringlab run: node %d of %d joined run %s at %s (node 0's job: %s, %d epoch%s); its workers "
               "start when every node has joined\n", o.node_rank, o.nnodes, controller.run_id().c_str(),
               net::host_port(o.master_addr, o.master_port).c_str(), o.job.describe().c_str(), o.job.epochs,
               o.job.epochs == 1 ? "" : "s");
  const std::vector<std::string> overridden = flags_node0_overrides(flags, o.job);
  if (!overridden.empty())
    std::fprintf(stderr, "ringlab run: note: every node runs node 0's job; given here and not used: %s\n",
                 fmt::format("{}", fmt::join(overridden, ", ")).c_str());
  std::fflush(stderr);
}

// Once the nodes of a multi-node run have met and the workers start.
void say_nodes_met(const Controller& controller) {
  const ControllerOptions& o = controller.options();
  if (o.node_rank == 0)
    std::fprintf(stderr, "ringlab run: all %d nodes joined; %s\n", o.nnodes, ranks_start_here(o).c_str());
  else
    std::fprintf(stderr, "ringlab run: node %d of %d: every node has joined; %s; node 0 shows the run's progress and "
                 "prints its report\n", o.node_rank, o.nnodes, ranks_start_here(o).c_str());
  std::fflush(stderr);
}

// Ctrl-Z on a joined node: node 0 is told before this controller stops, and again once `fg`
// (or SIGCONT) resumes it. Its ranks, in a process group of their own, train on meanwhile.
void suspend_joined_node(Controller& controller, SuspendSignal& suspend, bool quiet) {
  const int node = controller.options().node_rank;
  if (!quiet && ::isatty(STDERR_FILENO)) std::fputs("\r\033[K", stderr);  // the terminal's "^Z" echo
  if (!suspend.resumable()) {
    suspend.forget();
    if (!quiet)
      std::fprintf(stderr, "ringlab run: Ctrl-Z ignored: no shell here could resume a stopped node %d (`fg`); it goes "
                   "on (Ctrl-C stops the run)\n", node);
    return;
  }
  const bool told = controller.say_suspended(true);
  if (!quiet && told)
    std::fprintf(stderr, "ringlab run: Ctrl-Z: node %d's controller stops here (node 0 was told, and this node's "
                 "ranks train on); `fg` resumes it, and the run's end waits for it\n", node);
  else if (!quiet)
    std::fprintf(stderr, "ringlab run: Ctrl-Z: node %d's controller stops here, and node 0 could not be told (this "
                 "node has not joined its run yet, or its store is gone); `fg` resumes it\n", node);
  std::fflush(stderr);
  suspend.stop_now();
  controller.say_suspended(false);
  if (!quiet) std::fprintf(stderr, "ringlab run: node %d's controller resumed\n", node);
}

// Node 0: says when another node's controller was suspended with Ctrl-Z, and when it came back.
void say_suspended_nodes(const Controller& controller, std::vector<int>& said, ProgressBar& bar, bool quiet) {
  const std::vector<int> now = controller.suspended_nodes();
  if (now == said) return;
  bar.clear();
  for (int node : now)
    if (!quiet && std::find(said.begin(), said.end(), node) == said.end())
      std::fprintf(stderr, "ringlab run: node %d's controller was suspended (Ctrl-Z there): its ranks train on, "
                   "and the run's end waits for it to be resumed (`fg` on node %d)\n", node, node);
  for (int node : said)
    if (!quiet && std::find(now.begin(), now.end(), node) == now.end())
      std::fprintf(stderr, "ringlab run: node %d's controller resumed\n", node);
  said = now;
}

// How long the workers get to stop together at a step boundary after Ctrl-C or SIGTERM, before
// they are terminated. A step (or an epoch's evaluation) longer than this is cut short.
constexpr std::chrono::seconds kStopPatience(5);

// A stretch this long without a new step is said: the engine's steps take well under a
// millisecond, a script's first one comes a few seconds after its imports.
constexpr std::chrono::seconds kQuietSteps(15);

// A hang shows as nothing at all: the ranks wait in a collective until their timeout (for a
// script, its own process group's, or ringlab's watchdog's at --timeout + 15 s without a report,
// whichever comes first).
void say_quiet_steps(const Controller& controller, std::chrono::seconds quiet) {
  const int64_t steps = controller.steps_done();
  // Nothing at all from any rank: a script's imports (torch alone takes seconds, more on a busy
  // machine) or a rank held before its first report, not yet ranks waiting in a collective.
  if (controller.events_received() == 0) {
    std::fprintf(stderr, "ringlab run: no rank has reported anything in the %lld s since the start: the processes may "
                 "still be starting (a script's imports take seconds, more on a busy machine), or be held before their "
                 "first report; %s; Ctrl-C stops it\n", static_cast<long long>(quiet.count()),
                 controller.options().torch.empty() ? "--timeout ends a run that never reports"
                                                     : "ringlab ends a script that never reaches watch() after --timeout + 15 s");
    return;
  }
  // Reported: a rank held in a collective sends the events of its last steps only once it is out.
  const std::string since = steps == 0 ? fmt::format("the ranks have reported no step in the {} s since the start", quiet.count())
                                       : fmt::format("the ranks have reported no new step for {} s, after {} step{}", quiet.count(),
                                                     steps, steps == 1 ? "" : "s");
  const std::string until = controller.options().torch.empty()
                                ? fmt::format("until --timeout ({:g} s) ends the run", controller.options().job.timeout_s)
                                : fmt::format("until the script's own timeout ends the run, or ringlab does after {:g} s "
                                              "without a report (--timeout + 15 s)",
                                              controller.options().job.timeout_s + 15.0);
  std::fprintf(stderr, "ringlab run: %s: the ranks may be waiting for each other in a collective, %s; Ctrl-C "
               "stops it. Where each rank is, by its last report:\n", since.c_str(), until.c_str());
  // The rank the others wait for is the one whose line stands apart: "no step or collective
  // reported", or an earlier collective than theirs; said first where the reports line up so.
  for (const std::string& line : controller.rank_positions()) std::fprintf(stderr, "  %s\n", line.c_str());
  if (const std::string missing = controller.who_is_missing(); !missing.empty())
    std::fprintf(stderr, "  so: %s\n", missing.c_str());
}

// Waits for the run to end, printing the report's lines as they come and drawing the progress
// bar; the first Ctrl-C or SIGTERM asks the controller to stop the run (a second one ends the
// process at once: see InterruptSignals).
RunResult watch(Controller& controller, const InterruptSignals& signals, LiveReport& live, ProgressBar& bar,
                bool quiet, const std::function<void()>& on_joined) {
  bool asked = false, said_joined = false, said_met = false;
  std::optional<SuspendSignal> suspend;
  if (controller.options().node_rank > 0) suspend.emplace();
  // Node 0 of several says when another node is suspended, and when its end waits for one.
  const bool node0_of_several = controller.options().node_rank == 0 && controller.options().job.node_count() > 1;
  std::vector<int> said_suspended;
  std::string end_wait_said, join_said;
  StepSilence silence(kQuietSteps);
  while (!controller.poll()) {
    if (suspend && suspend->requested()) {
      bar.clear();
      suspend_joined_node(controller, *suspend, quiet);
    }
    if (node0_of_several) say_suspended_nodes(controller, said_suspended, bar, quiet);
    if (!said_joined && controller.joined()) {
      said_joined = true;
      on_joined();
    }
    if (!said_met && controller.nodes_met()) {
      said_met = true;
      bar.clear();
      say_nodes_met(controller);
    }
    if (std::string note = node0_of_several && !said_met ? controller.join_note() : ""; !note.empty() && note != join_said) {
      std::fprintf(stderr, "ringlab run: %s\n", note.c_str());  // even with -q: a node failed to join
      join_said = std::move(note);
    }
    if (std::string note = node0_of_several ? controller.end_wait_note() : "";
        !note.empty() && note != end_wait_said) {
      bar.clear();
      if (!quiet) std::fprintf(stderr, "ringlab run: %s\n", note.c_str());
      end_wait_said = std::move(note);
    }
    const int sig = signals.wait(std::chrono::milliseconds(100));
    if (sig != 0 && !asked) {
      asked = true;
      bar.clear();
      // A PyTorch script does not stop at a step boundary when asked (it cannot see ringlab's
      // store): it gets SIGTERM at once, which its watcher reports as the end of the run.
      if (!controller.options().torch.empty()) {
        controller.request_stop(stop_cause_for_signal(sig), std::chrono::milliseconds(0));
        if (!quiet)
          std::fprintf(stderr, "ringlab run: %s: stopping the script's processes (SIGTERM)\n",
                       to_string(stop_cause_for_signal(sig)));
        continue;
      }
      controller.request_stop(stop_cause_for_signal(sig), kStopPatience);
      // Before every node has joined, no worker has started: there is nothing to wait for.
      if (controller.options().job.node_count() > 1 && !controller.nodes_met()) {
        if (!quiet)
          std::fprintf(stderr, "ringlab run: %s: stopping before any worker started (not every node has joined)\n",
                       to_string(stop_cause_for_signal(sig)));
        continue;
      }
      // How to ask again names what was sent: Ctrl-C at a terminal, the signal's name otherwise.
      const std::string again = sig == SIGINT ? "press Ctrl-C again" : "send " + signal_name(sig) + " again";
      // The epochs are printed by node 0 alone, which shows the run's progress.
      const char* printed = controller.options().node_rank == 0 ? "the epochs already trained are still printed"
                                                                : "node 0 still prints the epochs already trained";
      if (!quiet)
        std::fprintf(stderr, "ringlab run: %s: stopping the workers together at their next step vote (one every "
                     "50 ms of training or so; %s; at most %lld s); %s to stop at once\n",
                     to_string(stop_cause_for_signal(sig)), printed, static_cast<long long>(kStopPatience.count()),
                     again.c_str());
    }
    if (const std::string lines = live.take(); !lines.empty()) {
      bar.clear();
      std::fputs(lines.c_str(), stdout);
      std::fflush(stdout);
    }
    // Node 0 of several draws no bar before every node has joined: no step can be taken yet.
    const bool can_step = controller.options().job.node_count() <= 1 || controller.nodes_met();
    if (can_step) bar.draw(controller.steps_done());
    // The ranks' events go to node 0 alone: another node's controller sees no step, and a quiet
    // note there would call every healthy run of more than 15 s silent. Node 0 says it.
    const bool sees_steps = controller.options().node_rank == 0;
    if (can_step && sees_steps && !asked && silence.went_quiet(controller.steps_done(), StepSilence::Clock::now()) &&
        !quiet) {
      bar.clear();
      say_quiet_steps(controller, silence.quiet_for(StepSilence::Clock::now()));
    }
  }
  bar.clear();
  std::fputs(live.take().c_str(), stdout);
  return controller.wait();
}

void write_flight_dump(const RunResult& r, const std::string& path) {
  write_output_file(path, "--dump-flight-recorder", [&](std::ostream& out) {
    out << (r.flight_report.empty() ? std::string("{\"ok\": true, \"note\": \"no rank failed\"}") : r.flight_report)
        << "\n";
  });
}

// A join file of a run whose node 0 still answers belongs to that run: writing over it would
// send its late nodes to this one (with this run's token), and removing it at this run's end would
// leave them none. One left behind by a run that ended without removing it (SIGKILL) is taken.
void refuse_live_join_file(const std::string& path) {
  std::error_code missing;
  if (!std::filesystem::exists(path, missing)) return;
  JoinInfo other;
  try {
    other = read_join_file(path);
  } catch (const Error&) {
    return;  // not a join file this can read: written over, as any output file is
  }
  try {
    net::connect_tcp(other.master_addr, other.master_port, std::chrono::milliseconds(300));
  } catch (const Error&) {
    return;  // nobody answers there: the run it describes has ended
  }
  throw InputError(fmt::format("--join-file {}: it belongs to run {}, whose node 0 still answers at {}; give this run "
                               "a join file of its own (or end that run first)",
                               path, other.run_id, net::host_port(other.master_addr, other.master_port)));
}

// Node 0 of a multi-node run says what every other node runs to join it, and with --join-file
// writes it (with the token) to a file only its owner can read.
void invite_other_nodes(const Controller& controller, const RunFlags& f) {
  const ControllerOptions& o = controller.options();
  JoinInfo info{o.master_addr, controller.store_port(), o.nnodes, o.nproc_per_node(), controller.run_id(), controller.token()};
  if (!f.join_file.empty()) write_join_file(f.join_file, info);
  std::fprintf(stderr, "ringlab run: node 0 of %d, run %s: the store is at %s, %d rank%s per node.\n"
               "  On every other node K (1 to %d), run:\n    %s\n", o.nnodes, info.run_id.c_str(),
               net::host_port(o.master_addr, info.master_port).c_str(), o.nproc_per_node(),
               o.nproc_per_node() == 1 ? "" : "s", o.nnodes - 1,
               join_command(info, f.join_file).c_str());
  if (!f.join_file.empty())
    std::fprintf(stderr, "  (copy %s there first: it holds the run's token, is readable by you only, and is removed "
                 "when the run ends)\n", f.join_file.c_str());
  else if (!std::getenv("RINGLAB_TOKEN"))
    std::fprintf(stderr, "  with RINGLAB_TOKEN=%s in their environment (or start node 0 with --join-file)\n",
                 info.token.c_str());
  if (net::is_loopback(o.master_addr))
    std::fprintf(stderr, "  note: %s is reachable from this machine only; for nodes on other machines give "
                 "--master-addr an address of this one that they reach\n", o.master_addr.c_str());
  std::fflush(stderr);
}

// The job's ranks_per_node as the controller will set it for a run over several nodes.
std::vector<int> placed_ranks(const ControllerOptions& o) {
  if (!o.job.ranks_per_node.empty() || o.nnodes < 2) return o.job.ranks_per_node;
  return std::vector<int>(static_cast<size_t>(o.nnodes), o.nproc_per_node());
}

std::string joined_node_footer(const ControllerOptions& o) {
  const int first = o.node_rank * o.nproc_per_node();
  const int last = first + o.nproc_per_node() - 1;
  return fmt::format("ringlab run: node {} of {}: {} ended well; node 0 prints the run's report\n", o.node_rank, o.nnodes,
                     first == last ? fmt::format("rank {}", first) : fmt::format("ranks {} to {}", first, last));
}

// A step far slower than the others, which the mean hides: "; step 0 alone took 40.1 s (the
// others 1,180 µs each)", or "" when the steps are alike.
std::string slowest_step_words(const RunResult& r) {
  const std::optional<double> others = others_us_per_step(r.us_per_step, r.steps, r.slowest_step);
  if (!others) return "";
  const double ns = static_cast<double>(r.slowest_step.ns);
  const std::string took = ns >= 1e9 ? fmt::format("{:.1f} s", ns * 1e-9)
                           : ns >= 1e6 ? fmt::format("{:.1f} ms", ns * 1e-6)
                                       : fmt::format("{:.0f} µs", ns * 1e-3);
  return fmt::format("; step {} alone took {} (the others {:.0f} µs each)", r.slowest_step.step, took, *others);
}

// After a stop asked by a signal, a long run's outputs can take seconds to write (its trace most):
// said, so that the wait is not taken for a hang, with what a second signal would cost.
void say_writing_outputs(const RunFlags& f) {
  std::string outputs;
  for (const auto& [flag, path] : {std::pair<const char*, const std::string&>{"--report", f.report},
                                   {"--trace", f.trace}, {"--metrics", f.metrics},
                                   {"--dump-flight-recorder", f.flight_dump}})
    if (!path.empty()) outputs += fmt::format("{}{} {}", outputs.empty() ? "" : ", ", flag, path);
  if (outputs.empty()) return;
  std::fprintf(stderr, "ringlab run: writing %s (a second signal stops at once and leaves out what is not written by then)\n",
               outputs.c_str());
}
void run(RunFlags& f) {
  // Before any file is created or process started: from here on Ctrl-C stops the run cleanly.
  InterruptSignals signals("ringlab run");
  std::optional<JoinInfo> joined;
  if (!f.join_file.empty() && f.node_rank == 0 && f.job.nnodes < 2)
    throw InputError(fmt::format("--join-file {}: node 0 writes it for a run of several nodes (--nnodes N); to join "
                                 "the run it describes, give --node-rank K (1 or more)", f.join_file));
  if (f.node_rank < 0)
    throw InputError(fmt::format("--node-rank {}: a node's rank is 0 (the node that hosts the store) or more", f.node_rank));
  if (!f.join_file.empty() && f.node_rank > 0) {
    joined = read_join_file(f.join_file);
    take_from_join_file(f, *joined);
  }
  ControllerOptions options;
  // A scenario supplies the job; flags given on the command line still win.
  options.job = f.scenario.empty() ? f.job.resolve() : f.job.resolve_onto(load_scenario(f.scenario).job);
  if (f.max_restarts < 0 || f.max_restarts > 100)
    throw InputError(fmt::format("--max-restarts must be between 0 and 100, got {}", f.max_restarts));
  options.max_restarts = f.max_restarts;
  if (f.torch_script.empty()) require_backend(options.job.backend);  // a script's: options.validate()
  if (f.master_port < 0 || f.master_port > 65535)
    throw InputError(fmt::format("--master-port must be in [0, 65535], got {}", f.master_port));
  options.nnodes = f.job.nnodes;
  options.node_rank = f.node_rank;
  options.master_addr = f.master_addr;
  options.master_port = static_cast<uint16_t>(f.master_port);
  options.port_in_join_file = f.node_rank == 0 && !f.join_file.empty();
  options.token = run_token(joined);
  options.run_id = f.run_id;
  if (!f.torch_script.empty()) {
    refuse_job_flags_with_torch(f);
    options.torch = resolve_torch_script(f.torch_script, f.torch_args);
    // --algorithm ring asks the script's watcher for the drawn ring; the default times DDP's own.
    options.torch.teaching = given(f.job, "--algorithm") && options.job.algorithm == "ring";
  }
  else if (!f.torch_args.empty())
    throw InputError(fmt::format("unexpected argument '{}' (a script's own arguments go after --torch SCRIPT --)",
                                 f.torch_args.front()));
  options.placement = placement_from_flags(f.hosts, f.hostfile, f.launcher);
  // Across hosts without -n, the world is every slot the hosts have; under srun, every task of
  // the allocation (salloc -n 4).
  if (options.placement.spans_hosts() && f.job.cmd->count("--world-size") == 0)
    options.job.world_size = total_slots(options.placement.hosts);
  if (options.placement.srun && f.job.cmd->count("--world-size") == 0) options.job.world_size = allocation_tasks();
  options.validate();
  check_outputs(f);
  if (!f.trace.empty() && options.job.trace_level == "none")
    throw InputError("--trace with --trace-level none: a trace of a run that asks for none; give --trace-level steps "
                     "(each step's spans) or chunks (every ring chunk too)");
  if (options.node_rank > 0 && (!f.report.empty() || !f.trace.empty() || !f.metrics.empty() || !f.flight_dump.empty()))
    throw InputError("--report, --trace, --metrics and --dump-flight-recorder are written by node 0, which every "
                     "rank of the run reports to");
  if (const std::string warning = exposure_warning(options.master_addr); !warning.empty())
    std::fprintf(stderr, "ringlab run: %s\n", warning.c_str());
  if (options.torch.empty() && !f.quiet) note_faults_that_never_fire(options.job);
  if (options.torch.empty() && !f.quiet) note_uneven_inputs(options.job);
  if (options.torch.empty() && !f.quiet) note_no_steps(options.job);
  if (options.torch.empty()) note_trace_size(options.job, f.trace, f.quiet);

  LiveReport live(options.job);
  // A --torch script prints its own lines; the seed report's would say them a second time.
  const bool own_report = !f.quiet && options.torch.empty();
  RunOutputs sinks(!f.trace.empty(), !f.metrics.empty(), own_report ? &live : nullptr, placed_ranks(options));
  Controller controller(options, sinks);
  const bool invites = options.nnodes > 1 && options.node_rank == 0;
  if (invites && !f.join_file.empty()) refuse_live_join_file(f.join_file);
  controller.start();  // makes the run's private folder, so its files are known from here on
  // Once its store is bound: a node 0 that cannot bind its port has no run to invite anyone to,
  // and must leave a join file of the same name (another run's) as it was.
  if (invites) invite_other_nodes(controller, f);
  for (const std::string& path : controller.scratch_files()) signals.remove_on_abort(path);
  // The join file holds the token: it goes with the run (the other nodes have joined by then).
  const bool wrote_join_file = options.nnodes > 1 && options.node_rank == 0 && !f.join_file.empty();
  if (wrote_join_file) signals.remove_on_abort(f.join_file);
  RunResult result;
  {
    const JobConfig& j = options.job;
    const int64_t per_rank = (j.samples + j.world_size - 1) / j.world_size;
    // A joining node's ranks report to node 0, which draws the progress: here it would stand at 0.
    // A script prints its own lines, and its epochs and batches are its own: no bar for it either.
    ProgressBar bar(j.epochs * ((per_rank + j.batch_size - 1) / j.batch_size),
                    !f.quiet && options.node_rank == 0 && options.torch.empty());
    if (options.node_rank > 0 && !f.quiet)
      std::fprintf(stderr, "ringlab run: node %d of %d: joining node 0's run at %s (waiting at most %.0f s)\n",
                   options.node_rank, options.nnodes, net::host_port(options.master_addr, options.master_port).c_str(),
                   options.job.timeout_s);
    result = watch(controller, signals, live, bar, f.quiet, [&] { say_joined(controller, f.job); });
  }
  if (wrote_join_file) std::remove(f.join_file.c_str());
  // What was printed as the run went is not printed again; a failure is printed even with -q.
  if (options.node_rank > 0) {
    // Said where this node said all else (stderr): its stdout has no script's lines to follow.
    if (result.ok && !f.quiet) std::fputs(joined_node_footer(options).c_str(), stderr);
  } else if (live.started()) {
    if (result.ok) std::fputs(seed_footer().c_str(), stdout);
  } else if (own_report && result.rank_count > 0) {  // a run that never started has nothing to report
    std::fputs(format_seed_report(result).c_str(), stdout);
  } else if (!f.quiet && !options.torch.empty() && result.ok) {
    // The script said its own lines; ringlab says what it watched, once.
    const bool epochs_known = std::ranges::find(result.job_not_reported, "epochs") == result.job_not_reported.end();
    const std::string epochs = epochs_known ? fmt::format(" in {} epoch{}", result.job.epochs, result.job.epochs == 1 ? "" : "s") : "";
    std::fprintf(stdout, "ringlab run: %s on %d rank%s ended well: %lld step%s%s, %.0f µs per step (rank 0)%s%s%s\n",
                 std::filesystem::path(options.torch.argv.front()).filename().c_str(),
                 result.job.world_size, result.job.world_size == 1 ? "" : "s", static_cast<long long>(result.steps),
                 result.steps == 1 ? "" : "s", epochs.c_str(), result.us_per_step, slowest_step_words(result).c_str(),
                 epochs_known ? "" : "; its epochs are not known (watch() was given no sampler and no epochs=)",
                 f.report.empty() ? "; --report FILE keeps its shards, buckets and losses" : "");
  }
  std::fflush(stdout);
  // How fast it went, on stderr (stdout stays the reference script's lines): a fault that did not
  // fail the run (a straggler's delay) shows only in its step time, and so does one step far
  // slower than the rest (a rank stopped for a while); without it the run reads as a plain one.
  if (!f.quiet && options.node_rank == 0 && options.torch.empty() && result.ok && result.steps > 0) {
    const std::string with =
        result.job.faults.empty() ? "" : fmt::format("with --fault {} ", fmt::join(result.job.faults, " --fault "));
    std::fprintf(stderr, "ringlab run: %sthe run ended well: %s step%s on %d rank%s, %.0f µs per step (rank 0)%s\n",
                 with.c_str(), std::to_string(result.steps).c_str(), result.steps == 1 ? "" : "s", result.job.world_size,
                 result.job.world_size == 1 ? "" : "s", result.us_per_step, slowest_step_words(result).c_str());
  }
  // The classic bug trains normally: what it did is said, or the run reads as a plain one.
  if (!f.quiet && options.node_rank == 0 && options.torch.empty() && result.ok && !result.job.set_epoch &&
      result.job.shuffle && result.epoch_mse.size() > 1)
    std::fprintf(stderr, "ringlab run: with --forget-set-epoch every epoch drew epoch 0's order: DistributedSampler "
                 "shuffles with seed + epoch, and set_epoch was never called (--report keeps each epoch's shards)\n");
  if (signals.received() && !f.quiet) say_writing_outputs(f);
  // One output that cannot be written does not cost the others, nor the run's own failure.
  bool written = write_output("run", f.report, [&] { write_report_json(result, f.report); });
  written &= write_output("run", f.trace, [&] { sinks.write_trace(f.trace); });
  written &= write_output("run", f.metrics, [&] { sinks.write_metrics(f.metrics); });
  written &= write_output("run", f.flight_dump, [&] { write_flight_dump(result, f.flight_dump); });
  if (!written) set_exit_code(1);
  // Each restart and the failure it answered; a run whose last attempt failed too says so below.
  if (result.restarts > 0 && !f.quiet)
    for (const std::string& note : result.restart_notes) std::fprintf(stdout, "%s\n", note.c_str());
  // The failure first, where a reader looks: a connection a failed rank's process left mid-request
  // is its echo (a stopped rank terminated by the launcher resets its store connection).
  if (!result.ok) {
    std::fprintf(stderr, "ringlab run: %s\n", result.failure.c_str());
    set_exit_code(1);
  }
  print_connection_errors(result);
  // Stopped by a signal, the exit code says which, as a shell reports a process killed by it.
  if (const int sig = signals.received()) set_exit_code(InterruptSignals::exit_code(sig));
}

}  // namespace

void add_run_command(CLI::App& root) {
  auto* cmd = root.add_subcommand("run", "train with one real process per rank, headless, and print the report");
  auto f = std::make_shared<RunFlags>();
  add_job_flags(*cmd, f->job);
  cmd->add_option("--report", f->report, "write the run as JSON");
  cmd->add_option("--trace", f->trace,
                  "write a Chrome trace (Perfetto, chrome://tracing): about 1 KB per rank and step, and at "
                  "--trace-level chunks 0.8 KB more per rank and step for each other rank (13 KB a step at 4 "
                  "ranks, 4 KB at steps level); said before a run whose trace will take 1 GB or more");
  cmd->add_option("--metrics", f->metrics, "write per-step metrics as CSV");
  cmd->add_flag("-q,--quiet", f->quiet, "print nothing but errors");
  cmd->add_option("--scenario", f->scenario, "start from a scenario (a name from assets/scenarios or a .json path)");
  cmd->add_option("--max-restarts", f->max_restarts, "restart the group from the last epoch checkpoint after a failure")
      ->capture_default_str();
  cmd->add_option("--dump-flight-recorder", f->flight_dump, "write the ranks' flight recorders as JSON on failure");
  add_node_count_flag(*cmd, f->job);
  cmd->add_option("--node-rank,--node_rank", f->node_rank, "this node's rank")->capture_default_str();
  cmd->add_option("--join-file", f->join_file,
                  "node 0: write what the other nodes need to join (with the token, mode 0600) to this file; "
                  "another node: join the run it describes");
  cmd->add_option("--run-id,--rdzv-id", f->run_id, "the run's id (node 0 makes one up when not given)");
  cmd->add_option("--master-addr,--master_addr", f->master_addr, "where the rendezvous store listens")
      ->capture_default_str();
  cmd->add_option("--master-port,--master_port", f->master_port, "the store's port (0: any free port)")
      ->capture_default_str();
  cmd->add_option("--hosts", f->hosts, "--backend mpi across hosts: mpirun -H, e.g. h1:2,h2:2 (host:slots)");
  cmd->add_option("--hostfile", f->hostfile, "--backend mpi across the hosts of an OpenMPI hostfile (host slots=N)");
  cmd->add_option("--launcher", f->launcher, "auto (processes here, mpirun for --backend mpi) | srun (in a Slurm "
                  "allocation)")->capture_default_str();
  cmd->add_option("--torch", f->torch_script,
                  "run this PyTorch DDP script once per rank instead of ringlab's workers (torchrun's environment; "
                  "its ringlab_torch watcher reports to the run); its own arguments go after --")
      ->check(torch_option_problem, "SCRIPT");
  cmd->add_option("script_args", f->torch_args, "the --torch script's arguments (after --)");
  cmd->callback([f] { run(*f); });
}

}  // namespace ringlab::app

#include "engine/rank/worker.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string_view>
#include <thread>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "engine/core/clock.h"
#include "engine/core/error.h"
#include "engine/ddp/collective_check.h"
#include "engine/core/limits.h"
#include "engine/dist/backends.h"
#include "engine/net/store.h"
#include "engine/rank/checkpoint.h"
#include "engine/net/event_client.h"
#include "engine/events/flight_recorder.h"
#include "engine/events/rank_events.h"
#include "engine/rank/step_votes.h"
#include "engine/rank/trainer.h"
#include "engine/rank/worker_env.h"
#include "engine/rank/gpu_trainer.h"
#include "engine/rank/seed_report.h"

namespace ringlab {
namespace {

using std::chrono::milliseconds;

milliseconds job_timeout(const JobConfig& job) { return milliseconds(static_cast<int64_t>(job.timeout_s * 1000)); }

// Gated step-through. While the controller's gate mode is on, ring step k (counted from the
// moment this rank saw the gate close) may start once the controller has released k steps.
// Whether the gate is closed comes with the stop votes (rank 0's watcher reads the mode), so
// every rank learns it at the same step boundary and an open gate costs no request inside the
// ring. Only a rank that the votes say is held asks the store itself, at every ring step: it
// waits there anyway, and the mode may have opened since the vote. Before the first vote (the
// seed's demo all-reduce of [1, 2, 3] comes before the first step) and without votes (a worker
// started by hand with --interactive), each rank reads the mode itself at most every 20 ms. A
// long pause is the point of gating: the wait is bounded by an hour, not by the job's timeout.
class Gate {
 public:
  Gate(StoreClient& store, int rank, EventSink& events) : store_(store), rank_(rank), events_(events) {}
  // Where the mode comes from: the votes; without them (null), the store, every 20 ms.
  void read_mode_from(const StepVotes* votes) { votes_ = votes; }

  int64_t held_ns() const { return held_ns_; }  // waited at the gate, in all
  // Whether this rank left the gate because a stop (or a live change) was asked: rank 0 votes it
  // at the step's end without waiting for its watcher's next look at the store.
  bool saw_stop() const { return saw_stop_; }

  void before_step(RingPhase phase, int ring_step) {
    const bool first = !passed_any_;
    passed_any_ = true;
    if (!closed(false) || !closed(true)) {
      active_ = false;
      return;
    }
    if (!active_) {
      // A gate closed from the start counts every release since the controller made the store
      // for these workers, so a Next pressed before they reach it is not lost; one closed later
      // counts those from when this rank found it closed.
      active_ = true;
      base_ = first ? 0 : store_.add(store_keys::kGateReleased, 0);
      taken_ = 0;
    }
    ++taken_;
    const int64_t t0 = now_ns();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::hours(1);
    while (store_.add(store_keys::kGateReleased, 0) < base_ + taken_) {
      if (!closed(true)) break;
      if (store_.check({store_keys::kStop})) {
        saw_stop_ = true;
        break;
      }
      if (std::chrono::steady_clock::now() > deadline)
        throw TimeoutError(ErrorContext{rank_, "gate", ring_step}, "no step release from the controller for an hour");
      // Four requests to the controller's store a look. Every 20 ms a release still reaches the
      // workers within about a frame of the class pressing Next, and the app, which answers the
      // looks of every held rank, used 9% of a core at the gate of a 4-rank run (16% at 5 ms).
      std::this_thread::sleep_for(milliseconds(20));
    }
    Event e;
    e.kind = EventKind::GateWait;
    e.rank = rank_;
    e.t_begin_ns = t0;
    e.t_end_ns = now_ns();
    held_ns_ += e.t_end_ns - t0;
    e.phase = static_cast<int8_t>(phase);
    e.ring_step = ring_step;
    events_.emit(std::move(e));
  }

 private:
  bool closed(bool fresh) {
    if (!fresh && votes_ && votes_->voted()) return votes_->gate_closed();
    const int64_t now = now_ns();
    if (fresh || now - checked_ns_ > 20'000'000) {
      checked_ns_ = now;
      closed_ = mode_.closed(store_);
    }
    return closed_;
  }

  StoreClient& store_;
  int rank_;
  EventSink& events_;
  const StepVotes* votes_ = nullptr;
  GateModeReader mode_;
  bool active_ = false, closed_ = false, passed_any_ = false, saw_stop_ = false;
  int64_t base_ = 0, taken_ = 0, checked_ns_ = 0;
  int64_t held_ns_ = 0;
};

// A worker waits for the controller much longer than for a peer: a controller that does not
// answer is suspended (Ctrl-Z, SIGSTOP; it is resumed with `fg` or SIGCONT), not dead: a dead
// one closes its connections, which fails every request at once, and takes the workers with it.
milliseconds controller_patience(const JobConfig& job) {
  return std::max<milliseconds>(10 * job_timeout(job), std::chrono::minutes(10));
}

// The "drop" fault: shut down every TCP connection of this process except the ones to the
// controller (store and event server), as a pulled cable would. gloo's pairs see the
// connection die; peers see it from their side. (MPI talks through shared memory here.)
void drop_peer_connections(const WorkerEnv& env) {
  DIR* dir = ::opendir("/proc/self/fd");
  if (!dir) return;
  while (dirent* d = ::readdir(dir)) {
    const int fd = std::atoi(d->d_name);
    struct stat st{};
    if (fd <= 2 || ::fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    sockaddr_storage peer{};
    socklen_t len = sizeof peer;
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) != 0) continue;
    uint16_t port = 0;
    if (peer.ss_family == AF_INET) port = ntohs(reinterpret_cast<sockaddr_in*>(&peer)->sin_port);
    else if (peer.ss_family == AF_INET6) port = ntohs(reinterpret_cast<sockaddr_in6*>(&peer)->sin6_port);
    else continue;
    if (port == env.master_port || port == env.event_port) continue;
    ::shutdown(fd, SHUT_RDWR);
  }
  ::closedir(dir);
}

void emit_flight_record(EventSink& events, int rank, const FlightRecorder& recorder) {
  Event e;
  e.kind = EventKind::FlightRecord;
  e.rank = rank;
  e.t_begin_ns = e.t_end_ns = now_ns();
  e.text = recorder.to_json(rank).dump();
  events.emit(std::move(e));
}

// When the controller stops the run with SIGTERM (another rank failed, or the run was stopped and
// this rank did not reach a step boundary in time), this rank still tells what it was doing: a
// thread waits for the signal, holds the training at its next collective, sends the flight record,
// flushes and exits. SIGTERM is blocked in every other thread, so none of them is interrupted
// mid-call. A SIGTERM from elsewhere (kill, Slurm's scancel, a job's time limit) says who sent
// it: the controller's account must not read it as its own stop of a healthy rank.
class ReportOnTerminate {
 public:
  // Call block() first thing, before any thread exists: threads inherit the signal mask.
  static void block() {
    sigset_t set = terminate_set();
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
  }
  ReportOnTerminate(EventSink& events, int rank, FlightRecorder& recorder) : armed_(std::make_shared<std::atomic<bool>>(true)) {
    start_thread("reporting a SIGTERM", [armed = armed_, &events, rank, &recorder] {
      sigset_t set = terminate_set();
      siginfo_t info{};
      if (sigwaitinfo(&set, &info) < 0) return;
      if (*armed) {
        try {
          // Training goes on in the other threads meanwhile: held first, or the record sent
          // would be older than the events that follow it.
          recorder.hold_new_collectives(std::chrono::milliseconds(50));
          Event e;
          e.kind = EventKind::TornDown;
          e.rank = rank;
          e.t_begin_ns = e.t_end_ns = now_ns();
          e.text = terminated_by(info);
          e.code = sent_from_outside(info) ? kTornDownFromOutside : 0;
          events.emit(std::move(e));
          emit_flight_record(events, rank, recorder);
          events.flush_events();
        } catch (...) {
          // The controller no longer listens (that is often why it stopped us): exit all the same.
        }
      }
      std::_Exit(143);
    }).detach();
  }
  ~ReportOnTerminate() { *armed_ = false; }  // the events and recorder are about to go away

 private:
  // The controller (or the mpirun or srun it started, which pass its stop on) is this process's
  // parent; any other sender is outside ringlab.
  static bool sent_from_outside(const siginfo_t& info) {
    return (info.si_code == SI_USER || info.si_code == SI_QUEUE) && info.si_pid != ::getppid();
  }
  // The program that sent it, by its process name ("" once it is gone).
  static std::string sender_name(pid_t pid) {
    std::FILE* f = std::fopen(fmt::format("/proc/{}/comm", pid).c_str(), "r");
    if (!f) return "";
    char name[64] = {};
    const bool read = std::fgets(name, sizeof name, f) != nullptr;
    std::fclose(f);
    std::string s = read ? name : "";
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
  }
  static std::string terminated_by(const siginfo_t& info) {
    if (sent_from_outside(info))
      return fmt::format("ended by a SIGTERM from process {}, which is not ringlab's: kill, scancel, or a job's time "
                         "limit", info.si_pid);
    // Started by mpirun's daemon or srun's slurmstepd, the signal is theirs to pass on: the
    // controller's stop, or their own (Slurm's scancel, a job's time limit).
    const std::string parent = info.si_code == SI_USER ? sender_name(info.si_pid) : "";
    if (parent.empty() || parent == "ringlab") return "stopped by the controller (SIGTERM)";
    return fmt::format("stopped by SIGTERM from {}, which started it (the controller's stop passed on, or its own, as "
                       "on scancel)", parent);
  }
  static sigset_t terminate_set() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    return set;
  }
  std::shared_ptr<std::atomic<bool>> armed_;
};

void emit_run_end(EventSink& events, int rank, const RankOutcome& out) {
  if (rank == 0) emit_final_parameters(events, rank, out.steps, out.final_parameters);
  Event e;
  e.kind = EventKind::RunEnd;
  e.rank = rank;
  e.t_begin_ns = e.t_end_ns = now_ns();
  e.value = out.us_per_step;
  e.step = out.steps;
  e.text = out.stopped ? "stopped" : "done";
  events.emit(std::move(e));
}

void emit_run_begin(EventSink& events, int rank, const JobConfig& job) {
  Event e;
  e.kind = EventKind::RunBegin;
  e.rank = rank;
  e.t_begin_ns = e.t_end_ns = now_ns();
  e.value = job.world_size;
  nlohmann::json j = job;
  e.text = j.dump();
  events.emit(std::move(e));
}

// The NCCL backend trains on the rank's GPU; the CPU backends on the CPU.
RankOutcome train_on_backend(const JobConfig& job, ProcessGroup& group, EventSink& events, const TrainerHooks& hooks,
                             const TrainingState* resume) {
  if (group.backend() == "nccl") {
    std::string why;
    const GpuTrainerApi* gpu = gpu_trainer(&why);
    if (!gpu) throw Error(why);
    return gpu->train(job, group, events, hooks, resume);
  }
  return train_rank(job, group, events, hooks, resume);
}

// A worker started by hand (torchrun-style, or by srun) has no controller to report to: rank 0
// prints the course script's lines itself, as the script does under torchrun.
class PrintedReport : public EventSink {
 public:
  explicit PrintedReport(const JobConfig& job) : lines_(job) {}
  void emit(Event e) override {
    lines_.emit(std::move(e));
    const std::string text = lines_.take();
    if (text.empty()) return;
    std::fputs(text.c_str(), stdout);
    std::fflush(stdout);
  }
  bool wants_chunks() const override { return false; }

 private:
  LiveReport lines_;
};

std::unique_ptr<EventSink> connect_events(const WorkerEnv& env, const JobConfig& job) {
  if (env.event_addr.empty() && env.rank == 0) return std::make_unique<PrintedReport>(job);
  if (env.event_addr.empty()) return std::make_unique<NullEventSink>();
  EventClientOptions o;
  o.host = env.event_addr;
  o.port = env.event_port;
  o.token = env.token;
  o.rank = env.rank;
  o.timeout = job_timeout(job);
  o.controller_patience = controller_patience(job);
  o.wants_chunks = job.trace_level == "chunks";
  return std::make_unique<EventClient>(o);
}

// Reports what ends this rank (an error event, then its flight record) and exits at once: a
// failing rank leaves without tearing anything down, since destroying a process group whose
// peers sit in a collective can block for the whole timeout (or throw from a destructor, which
// would end in std::terminate), and the launcher stops the peers anyway. Reporting must not
// throw either: the failure may be that the controller no longer listens.
ErrorCode error_code_of(const std::exception* e) {
  if (dynamic_cast<const ddp::CollectiveMismatchError*>(e)) return ErrorCode::CollectiveMismatch;
  if (dynamic_cast<const TimeoutError*>(e)) return ErrorCode::Timeout;
  if (dynamic_cast<const PeerClosedError*>(e)) return ErrorCode::PeerClosed;
  if (dynamic_cast<const InputError*>(e)) return ErrorCode::BadInput;
  return ErrorCode::Other;
}

// A failed collective check, as data: both fingerprints and the neighbour's rank.
void emit_mismatch(EventSink& events, int rank, const ddp::CollectiveMismatchError& m) {
  Event e;
  e.kind = EventKind::CollectiveMismatch;
  e.rank = rank;
  e.t_begin_ns = e.t_end_ns = now_ns();
  e.step = m.mine.step;
  e.src = m.neighbour;
  append_fields(m.mine, e.indices);
  append_fields(m.theirs, e.indices);
  events.emit(std::move(e));
}

[[noreturn]] void fail_rank(EventSink& events, const WorkerEnv& env, const FlightRecorder& recorder,
                            const std::string& what, const std::exception* cause = nullptr) {
  // The controller prints the error from the event; started by hand, nobody else would.
  if (env.event_addr.empty()) {
    // Errors with a context already start with "rank N: ".
    if (std::string_view(what).starts_with(fmt::format("rank {}: ", env.rank)))
      std::fprintf(stderr, "ringlab worker %s\n", what.c_str());
    else
      std::fprintf(stderr, "ringlab worker rank %d: %s\n", env.rank, what.c_str());
  }
  try {
    Event err;
    err.kind = EventKind::Error;
    err.rank = env.rank;
    err.t_begin_ns = err.t_end_ns = now_ns();
    err.code = static_cast<int32_t>(error_code_of(cause));
    err.text = what;
    if (const auto* m = dynamic_cast<const ddp::CollectiveMismatchError*>(cause)) emit_mismatch(events, env.rank, *m);
    events.emit(std::move(err));
    emit_flight_record(events, env.rank, recorder);
    if (auto* client = dynamic_cast<EventClient*>(&events)) client->flush(milliseconds(2000));
  } catch (const std::exception& e) {
    // The error may be the event connection's own (the controller went): said once, not twice.
    const std::string why = e.what();
    const bool prefixed = std::string_view(what).starts_with(fmt::format("rank {}: ", env.rank));
    if (why.find(what) != std::string::npos || what.find(why) != std::string::npos)
      std::fprintf(stderr, "ringlab worker %s%s (so the controller could not be told)\n",
                   prefixed ? "" : fmt::format("rank {}: ", env.rank).c_str(), what.c_str());
    else
      std::fprintf(stderr, "ringlab worker rank %d: %s (and it could not be reported to the controller: %s)\n",
                   env.rank, what.c_str(), why.c_str());
  }
  std::fflush(stderr);
  std::_Exit(1);
}

// A thread or process the backend could not start (gloo's, OpenMPI's) fails with EAGAIN and
// no word of why: when the user is at RLIMIT_NPROC, say so.
std::string with_limit_hint(const std::string& what) {
  if (what.find(std::strerror(EAGAIN)) == std::string::npos || !near_nproc_limit()) return what;
  return what + "; " + nproc_limit_text();
}

// The stop votes this rank takes part in: none when started by hand (no controller asks for a
// stop) nor in a run whose faults make ranks skip or add collectives (see WorkerOptions).
// `gate`: rank 0's gate, which may have seen the stop before the watcher.
std::unique_ptr<StepVotes> make_votes(const WorkerOptions& options, const WorkerEnv& env, const JobConfig& job,
                                      ProcessGroup& group, EventClient* client, const ControllerWatch* watch,
                                      const Gate* gate) {
  if (!client || !(options.interactive || options.stop_votes)) return nullptr;
  StepVoteHooks hooks;
  if (watch) hooks.stop_requested = [watch, gate] { return watch->requested() || gate->saw_stop(); };
  if (watch) hooks.gate_closed = [watch] { return watch->gate_closed(); };
  hooks.controller_behind = [client] { return client->behind(); };
  // A slice well under the group's timeout: the ranks vote again after it, together.
  const auto slice = std::chrono::milliseconds(static_cast<int64_t>(job.timeout_s * 250));
  hooks.wait_for_controller = [client, slice] {
    try {
      client->flush(slice);
    } catch (const TimeoutError&) {
      // Not all taken yet: the next vote says whether to wait again.
    }
  };
  return std::make_unique<StepVotes>(group, StepVotes::Cadence::Spaced, job.check_collectives, std::move(hooks));
}

// Whether the stop the ranks voted goes on with another set of workers. Rank 0 may have voted
// it from the gate before its watcher looked at the store: then the key itself says.
bool stopped_for_change(const ControllerWatch* watch, const Gate& gate, StoreClient& store) {
  if (watch && watch->for_change()) return true;
  if (!watch || !gate.saw_stop()) return false;
  const std::vector<uint8_t> value = store.get(store_keys::kStop);
  return !value.empty() && value[0] == store_keys::kStopForChange;
}

}  // namespace

int run_worker(JobConfig job, const WorkerOptions& options) {
  ReportOnTerminate::block();
  WorkerEnv env = read_worker_env();
  if (job.world_size != env.world_size && job.world_size != 1)
    throw InputError(fmt::format("--world-size {} disagrees with the environment's WORLD_SIZE={}", job.world_size,
                                 env.world_size));
  job.world_size = env.world_size;
  job.validate();
  const milliseconds timeout = job_timeout(job);

  // Started by hand (no controller): rank 0 hosts the store, as torchrun's static rendezvous does.
  std::unique_ptr<StoreServer> own_store;
  if (env.token.empty() && env.rank == 0 && job.backend != "mpi")
    own_store = std::make_unique<StoreServer>(env.master_addr, env.master_port, env.token);
  StoreClient store(env.master_addr, env.master_port, env.token, timeout, controller_patience(job));
  std::unique_ptr<EventSink> events = connect_events(env, job);
  auto* client = dynamic_cast<EventClient*>(events.get());

  FlightRecorder recorder;
  ReportOnTerminate on_sigterm(*events, env.rank, recorder);
  // Declared outside the try: when this rank fails, its connections stay open until its error
  // and flight record are on their way, so its peers fail on their own timeouts, not on a reset.
  std::unique_ptr<ProcessGroup> group;
  std::unique_ptr<ControllerWatch> watch;
  std::unique_ptr<StepVotes> votes;
  try {
    group = make_process_group(job.backend, env.rank, env.world_size, &store, timeout);
    std::optional<TrainingState> resume;
    if (!options.checkpoint_in.empty()) resume = load_checkpoint(options.checkpoint_in).state;
    if (client && env.rank == 0 && (options.interactive || options.stop_votes))
      watch = std::make_unique<ControllerWatch>(env.master_addr, env.master_port, env.token, timeout,
                                                controller_patience(job), options.interactive);
    // The gate reads the votes' verdict on its mode; rank 0's votes read whether it saw a stop.
    Gate gate(store, env.rank, *events);
    votes = make_votes(options, env, job, *group, client, watch.get(), &gate);
    gate.read_mode_from(votes.get());
    TrainerHooks hooks;
    hooks.recorder = &recorder;
    hooks.keep_history = false;  // shards and losses travel as events
    hooks.drop_connections = [&env] { drop_peer_connections(env); };
    if (!options.epoch_checkpoint.empty())
      hooks.epoch_checkpoint = [&](const TrainingState& s) { save_checkpoint({job, s}, options.epoch_checkpoint); };
    if (options.interactive) {
      hooks.before_ring_step = [&](RingPhase p, int s) { gate.before_step(p, s); };
      hooks.held_ns = [&] { return gate.held_ns(); };
    }
    if (votes)
      hooks.stop_at_step_boundary = [&](int64_t step) {
        if (!votes->due(step)) return false;
        // The vote is ringlab's own collective between steps, not DDP's: recorded, so that the
        // timeline shows what the pause between two steps is.
        const int64_t t0 = now_ns();
        const bool stop = votes->stop_here(step);
        emit_span(*events, EventKind::StepVote, env.rank, step, -1, t0);
        return stop;
      };

    emit_run_begin(*events, env.rank, job);
    RankOutcome out = train_on_backend(job, *group, *events, hooks, resume ? &*resume : nullptr);
    // A live change goes on from rank 0's checkpoint; a run that was ended needs none.
    if (out.stopped && env.rank == 0 && !options.checkpoint_out.empty() && stopped_for_change(watch.get(), gate, store))
      save_checkpoint({job, out.stopped_state}, options.checkpoint_out);
    emit_run_end(*events, env.rank, out);
    if (client) client->flush();
    // Nobody tears the group down while a peer still reads from it.
    const int64_t seq = recorder.schedule("barrier", 0, group->backend(), "native", out.steps);
    recorder.start(seq);
    group->barrier();
    recorder.complete(seq);
    if (dynamic_cast<PrintedReport*>(events.get()) && !out.stopped) std::fputs(seed_footer().c_str(), stdout);
    return 0;
  } catch (const std::exception& e) {
    fail_rank(*events, env, recorder, with_limit_hint(e.what()), &e);
  } catch (...) {
    fail_rank(*events, env, recorder, "an exception that is not a std::exception");
  }
}

}  // namespace ringlab

#include "engine/control/controller.h"

#include <arpa/inet.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "engine/core/clock.h"
#include "engine/core/error.h"
#include "engine/core/thread_name.h"
#include "engine/core/private_dir.h"
#include "engine/core/limits.h"
#include "engine/dist/backends.h"
#include "engine/net/endpoint.h"
#include "engine/net/socket.h"
#include "engine/net/store.h"
#include "engine/rank/checkpoint.h"
#include "engine/net/event_server.h"
#include "engine/net/ports.h"
#include "engine/job/fault_plan.h"
#include "engine/control/library_words.h"
#include "engine/control/launcher.h"
#include "engine/control/node_rendezvous.h"
#include "engine/control/openmpi_settings.h"
#include "engine/control/run_accumulator.h"
#include "engine/control/run_limits.h"
#include "engine/rank/worker.h"

namespace ringlab {

const char* to_string(StopCause cause) {
  switch (cause) {
    case StopCause::None: return "nobody";
    case StopCause::StopButton: return "the Stop button";
    case StopCause::Interrupt: return "SIGINT (Ctrl-C)";
    case StopCause::Terminate: return "SIGTERM";
    case StopCause::NoProgress: return "the controller's watchdog (no progress)";
    case StopCause::ResourceLimit: return "a resource limit of the controller";
    case StopCause::OtherNode: return "another node of the run";
    case StopCause::Hangup: return "SIGHUP (the terminal closed)";
  }
  return "?";
}

StopCause stop_cause_for_signal(int signal) {
  if (signal == SIGINT) return StopCause::Interrupt;
  return signal == SIGHUP ? StopCause::Hangup : StopCause::Terminate;
}

bool asked_by_user(StopCause cause) {
  return cause == StopCause::StopButton || cause == StopCause::Interrupt || cause == StopCause::Terminate ||
         cause == StopCause::Hangup;
}

namespace {

// The monitor looks at the workers every 50 ms (Launcher::wait); a longer gap between two looks means
// the controller's process was suspended meanwhile.
constexpr int64_t kSuspendedGapNs = 1'000'000'000;
// Every run's directory of checkpoints is named after it: ringlab-run-<run id>-<controller pid>-XXXXXX.
constexpr const char* kRunDirectoryFamily = "ringlab-run-";

// Multi-node runs: the monitor asks node 0's store whether another node ended the run every this
// many looks at the workers (every 200 ms), and gives its workers this long to stop together
// when one did. How long node 0 waits for the other nodes' exits, and they for its verdict.
constexpr int kLooksPerAbortCheck = 4;
constexpr auto kOtherNodeGrace = std::chrono::milliseconds(3000);
constexpr auto kNodeExchangeWait = std::chrono::milliseconds(5000);

// Where every event of the run goes first: folded into the result as it arrives (so the result
// never needs the events back), counted for the watchdog, then handed to the caller's sink (the
// app's feed, `ringlab run`'s exporters). The event server's connection threads call emit
// concurrently; one lock keeps the fold and each rank's order in the caller's sink consistent.
class Ingest : public EventSink {
 public:
  Ingest(const JobConfig& job, bool keep_history, EventSink& downstream)
      : accumulator_(job, keep_history), downstream_(downstream) {}

  void emit(Event event) override {
    std::lock_guard lock(mutex_);
    accumulator_.add(event);
    steps_done_ = accumulator_.steps_done();
    ++version_;
    downstream_.emit(std::move(event));
  }
  void emit_all(std::vector<Event>& events) override {
    std::lock_guard lock(mutex_);
    for (const Event& e : events) accumulator_.add(e);
    steps_done_ = accumulator_.steps_done();
    version_ += events.size();
    downstream_.emit_all(events);
  }
  uint64_t version() const { return version_; }
  int64_t steps_done() const { return steps_done_; }
  std::vector<std::string> rank_positions(int world_size) {
    std::lock_guard lock(mutex_);
    return accumulator_.rank_positions(world_size);
  }
  std::string who_is_missing() {
    std::lock_guard lock(mutex_);
    return accumulator_.who_is_missing();
  }
  RunResult finish(const std::vector<RankExit>& exits, const StopInfo& stop) {
    std::lock_guard lock(mutex_);
    return accumulator_.finish(exits, stop);
  }

 private:
  std::mutex mutex_;
  RunAccumulator accumulator_;
  EventSink& downstream_;
  std::atomic<uint64_t> version_{0};
  std::atomic<int64_t> steps_done_{0};
};

}  // namespace

struct Controller::Impl {
  ControllerOptions options;
  Ingest events;
  std::string token;
  std::string run_id;
  std::string event_addr;  // where every worker of the run reports: node 0's event server
  std::unique_ptr<StoreServer> store_server;
  std::unique_ptr<StoreClient> store;
  std::unique_ptr<EventServer> event_server;
  std::unique_ptr<Launcher> launcher;
  std::unique_ptr<PrivateDirectory> checkpoint_dir;  // mode 0700, removed when the run ends
  std::string checkpoint_path;                       // in checkpoint_dir
  std::vector<std::string> restart_notes;            // RunResult::restart_notes, as the restarts happen

  std::thread monitor;
  mutable std::mutex mutex;
  std::condition_variable cv;
  std::optional<RunResult> result;
  std::atomic<bool> stop_requested{false};
  StopCause stop_cause = StopCause::None;               // guarded by `mutex`
  std::string stop_detail;                              // guarded by `mutex`
  int stop_node = -1;                                   // guarded by `mutex`: where stop_cause came from
  int64_t stop_deadline_ns = INT64_MAX;                 // guarded by `mutex`: then the workers are terminated
  std::atomic<bool> gated{false};
  std::optional<std::pair<int, std::string>> pending_change;
  std::mutex launcher_mutex;  // kill_rank() (UI thread) against a new launcher (monitor thread)
  std::vector<std::string> connection_errors;  // monitor thread only, until published
  std::mutex store_mutex;                      // guards `store` once the run has started
  int looks_since_abort_check = 0;             // monitor thread only
  // Whether this node is one of the run's nodes: node 0 is; another, once node 0 let it join. A
  // node that could not join must not end the run of those that did (a second node claiming
  // their node rank, say).
  std::atomic<bool> in_the_run{true};
  std::atomic<bool> nodes_met{false};
  std::atomic<bool> joined{false};  // a joining node: node 0 took it into the run
  std::unique_ptr<NodeWatch> node_watch;  // node 0 of a multi-node run: are the others alive?
  std::vector<int> lost_nodes;            // nodes whose controller never said how its ranks ended
  std::vector<int> suspended_nodes;       // node 0: those suspended (Ctrl-Z) at the last look; under `mutex`
  std::atomic<bool> was_suspended{false};  // a joining node: its controller was suspended in this run
  std::string end_wait_note;              // node 0: why its end waits (a suspended node); under `mutex`
  std::string join_note;                  // node 0: a node refused while it waits for the others; under `mutex`
  std::chrono::milliseconds suspended_wait{0};  // node 0, monitor thread: how long the end waited for one

  Impl(ControllerOptions o, EventSink& sink)
      : options(with_placement(std::move(o))),
        events(options.job, options.keep_history, sink),
        token(options.token.empty() ? net::random_token(16) : options.token),
        run_id(options.run_id.empty() ? net::random_token(6) : options.run_id) {}

  // A multi-node run's views draw its node boundaries from the job.
  static ControllerOptions with_placement(ControllerOptions o) {
    place_on_nodes(o.job, o.nnodes);
    if (o.job.ranks_per_node.empty()) o.job.ranks_per_node = planned_ranks_per_node(o.placement, o.job.world_size);
    return o;
  }
  static void place_on_nodes(JobConfig& job, int nnodes) {
    if (nnodes > 1 && job.ranks_per_node.empty())
      job.ranks_per_node.assign(static_cast<size_t>(nnodes), job.world_size / nnodes);
  }

  bool multi_node() const { return options.nnodes > 1; }
  bool joining() const { return options.node_rank > 0; }

  std::vector<std::string> worker_args(const JobConfig& job, const std::string& checkpoint_in) const {
    nlohmann::json j = job;
    std::vector<std::string> args = {"worker", "--job-json", j.dump()};
    if (options.interactive) args.push_back("--interactive");
    else if (stop_votes_fit(job)) args.push_back("--stop-votes");
    if (!checkpoint_in.empty()) args.insert(args.end(), {"--checkpoint-in", checkpoint_in});
    args.insert(args.end(), {"--checkpoint-out", checkpoint_path});
    if (options.max_restarts > 0) args.insert(args.end(), {"--epoch-checkpoint", epoch_checkpoint_path()});
    return args;
  }

  void launch(const JobConfig& job, const std::string& checkpoint_in) {
    LaunchSpec spec;
    spec.world_size = job.world_size;
    spec.nnodes = options.nnodes;
    spec.node_rank = options.node_rank;
    spec.local_world_size = job.world_size / options.nnodes;
    spec.use_mpirun = job.backend == "mpi";
    spec.executable = options.executable;
    spec.placement = options.placement;
    spec.worker_args = worker_args(job, checkpoint_in);
    spec.master_addr = options.master_addr;
    spec.master_port = store_port();
    spec.env = {{"RINGLAB_EVENT_ADDR", event_addr},
                {"RINGLAB_TOKEN", token},
                {"RINGLAB_RUN_ID", run_id}};
    if (!options.torch.empty()) run_torch_script(spec);
    auto started = std::make_unique<Launcher>(spec);
    started->start();
    std::lock_guard<std::mutex> lock(launcher_mutex);
    launcher = std::move(started);
  }

  // The script instead of `ringlab worker`: PyTorch's own store gets its own free port, since
  // rank 0 of the script binds MASTER_PORT itself (init_process_group's TCPStore).
  void run_torch_script(LaunchSpec& spec) const {
    const TorchScript& t = options.torch;
    spec.executable = t.python;
    spec.worker_args = t.argv;
    spec.env["MASTER_PORT"] = std::to_string(pick_port_for_a_child(options.master_addr));
    const char* inherited = std::getenv("PYTHONPATH");
    spec.env["PYTHONPATH"] = inherited && *inherited ? t.python_path + ":" + inherited : t.python_path;
    if (t.teaching) spec.env["RINGLAB_TORCH_TEACHING"] = "1";
    spec.relay_output = true;  // the script's ranks print at once: whole lines, and its last words kept
  }

  std::string epoch_checkpoint_path() const { return checkpoint_path + ".epoch"; }

  uint16_t store_port() const { return store_server ? store_server->port() : options.master_port; }

  // After a failure: the same job again from the last epoch checkpoint (or from the start), with
  // the one-off faults taken out, so the lesson shows a recovery rather than the same crash.
  bool restart(JobConfig& job, std::string& checkpoint_in, int& restarts, const std::vector<RankExit>& exits) {
    if (restarts >= options.max_restarts || stop_requested) return false;
    ++restarts;
    const std::string cause = attempt_failure(exits);
    std::vector<std::string> kept;
    for (const Fault& f : parse_faults(job))
      if (f.kind == FaultKind::Delay) kept.push_back(to_string(f));
    job.faults = kept;
    Event marker;
    marker.kind = EventKind::Restart;
    marker.value = restarts;
    marker.rank = -1;
    marker.t_begin_ns = marker.t_end_ns = now_ns();
    marker.epoch = 0;
    marker.step = 0;
    // The newest epoch checkpoint, else the one the failed attempt resumed from: an attempt that
    // failed before ending an epoch of its own had still begun where that one left off.
    const std::string resume = checkpoint_path + ".resume";
    if (::access(epoch_checkpoint_path().c_str(), R_OK) == 0) ::rename(epoch_checkpoint_path().c_str(), resume.c_str());
    checkpoint_in = ::access(resume.c_str(), R_OK) == 0 ? resume : "";
    if (!checkpoint_in.empty()) {
      const Checkpoint c = load_checkpoint(checkpoint_in);
      marker.epoch = c.state.epoch;
      marker.step = c.state.steps_done;
    }
    marker.text = fmt::format("restart {} of {} from epoch {} (step {})", restarts, options.max_restarts,
                              marker.epoch, marker.step);
    restart_notes.push_back(fmt::format("restart {} of {}, {}, after: {}", restarts, options.max_restarts,
                                        checkpoint_in.empty() ? std::string("from the start (no epoch had ended)")
                                                              : fmt::format("from the end of epoch {} (step {})",
                                                                            marker.epoch, marker.step),
                                        cause));
    events.emit(std::move(marker));
    restart_store();
    launch(job, checkpoint_in);
    return true;
  }

  std::chrono::milliseconds timeout() const {
    return std::chrono::milliseconds(static_cast<int64_t>(options.job.timeout_s * 1000));
  }

  // The failed attempt's headline, as its report would have said it: the failure's first line,
  // and the one after it where that only named the fault ("fault injected: ... \nthen rank 0 ...").
  std::string attempt_failure(const std::vector<RankExit>& exits) {
    const std::string failure = events.finish(exits, stop_info()).failure;
    const size_t first = failure.find('\n');
    if (first == std::string::npos) return failure;
    if (failure.compare(first + 1, 5, "then ") != 0) return failure.substr(0, first);
    const size_t second = failure.find('\n', first + 1);
    return failure.substr(0, first) + "; " + failure.substr(first + 1, second == std::string::npos ? std::string::npos : second - first - 1);
  }

  // Node 0 (and a one-node run): the store, the event server every rank reports to, and, for
  // the other nodes, the run's description. A joining node starts nothing of its own yet: it
  // meets node 0 on the monitor thread (see join_node), so that start() never blocks.
  void start_services() {
    if (!joining()) {
      store_server = std::make_unique<StoreServer>(options.master_addr, options.master_port, token);
      store = std::make_unique<StoreClient>(options.master_addr, store_server->port(), token, timeout());
      event_server = std::make_unique<EventServer>(options.master_addr, 0, token, events);
      event_addr = net::host_port(options.master_addr, event_server->port());
      if (multi_node())
        publish_run(*store, {run_id, options.nnodes, options.nproc_per_node(), event_server->port(), options.job});
    }
    // Held: a controller killed by SIGKILL leaves its directory behind, and the next run's
    // controller on this machine removes it.
    checkpoint_dir = std::make_unique<PrivateDirectory>(fmt::format("{}{}-{}", kRunDirectoryFamily, run_id, ::getpid()),
                                                        "the run's checkpoints", kRunDirectoryFamily);
    checkpoint_path = checkpoint_dir->path() + "/run.ckpt";
  }

  // Nothing has moved for longer than the workers' own timeout: they should have failed by now.
  // Time the controller itself spent suspended (Ctrl-Z, SIGSTOP) does not count: the workers
  // waited for it, and the events they held back arrive the moment it is resumed.
  bool stalled(int64_t& last_version_ns, uint64_t& last_version, int64_t& last_look_ns) const {
    if (joining()) return false;  // the events go to node 0, whose watchdog ends the run for all
    const uint64_t v = events.version();
    const int64_t now = now_ns();
    if (now - last_look_ns > kSuspendedGapNs) last_version_ns += now - last_look_ns;
    last_look_ns = now;
    if (v != last_version) {
      last_version = v;
      last_version_ns = now;
      return false;
    }
    if (gated) {
      last_version_ns = now;
      return false;
    }
    return now - last_version_ns > static_cast<int64_t>((options.job.timeout_s + 15.0) * 1e9);
  }

  // What the watchdog says when it stops a run. A PyTorch script reports from watch() on, which
  // comes after init_process_group: a rank stuck before it (asleep, or in a long setup) holds
  // every other rank in init_process_group, and nothing at all is heard.
  std::string stall_words() const {
    const double limit_s = options.job.timeout_s + 15.0;
    if (!options.torch.empty() && events.version() == 0)
      return fmt::format("no rank reached ringlab_torch.watch(...) within {:.0f} s of starting (--timeout + 15 s): "
                         "init_process_group waits for every rank, so one rank stuck before it (or a setup that "
                         "takes longer: give --timeout more) holds them all; the run was stopped",
                         limit_s);
    return fmt::format("no progress from any rank for {:.0f} s: the run was stopped", limit_s);
  }

  // Whether the launcher should terminate the workers now: a stop whose patience has run out,
  // or a run that has stalled (which stops it).
  bool terminate_now(int64_t& last_ns, uint64_t& last_version, int64_t& last_look_ns) {
    stop_at_server_limit();
    stop_when_another_node_ended();
    if (stalled(last_ns, last_version, last_look_ns)) {
      emit_note(EventKind::Error, stall_words());
      request(StopCause::NoProgress, std::chrono::milliseconds(0));
    }
    if (!stop_requested) return false;
    std::lock_guard<std::mutex> lock(mutex);
    return now_ns() >= stop_deadline_ns;
  }

  std::vector<RankExit> wait_workers() {
    int64_t last_ns = now_ns(), last_look_ns = last_ns;
    uint64_t last_version = events.version();
    std::vector<RankExit> exits = launcher->wait(std::chrono::hours(24 * 365),
                                                 [&] { return terminate_now(last_ns, last_version, last_look_ns); });
    // Workers flush their events before they exit; let the server take in the last of them.
    if (event_server) event_server->wait_drained(std::chrono::milliseconds(3000));
    stop_at_server_limit();
    // And their output, before the run's own summary is printed after it.
    launcher->drain_output(std::chrono::milliseconds(2000));
    for (RankExit& e : exits)
      if (e.rank >= 0 && !e.ok() && !e.terminated) e.last_words = last_words_of(launcher->stderr_tail(e.rank));
    return exits;
  }

  // The first cause is kept; the patience can only shrink. Workers that vote (see step_votes.h)
  // see the stop key and stop together at their next step boundary.
  // `from`: the other node's note this stop follows (stop_for); its node and words are kept with
  // the cause, under the same lock, so that a Ctrl-C here at the same moment cannot pair its own
  // cause with the other node's name.
  void request(StopCause cause, std::chrono::milliseconds patience, const AbortNote* from = nullptr) {
    bool first = false;
    {
      std::lock_guard<std::mutex> lock(mutex);
      first = stop_cause == StopCause::None;
      if (first) {
        stop_cause = cause;
        if (from) {
          stop_detail = asked_by_user(from->cause) ? fmt::format("on node {}", from->node)
                                                   : fmt::format("node {}: {}", from->node, from->why);
          stop_node = from->node;
        } else if (multi_node() && cause != StopCause::OtherNode) {
          stop_node = options.node_rank;  // asked here
        }
      }
      stop_deadline_ns = std::min(stop_deadline_ns, now_ns() + std::chrono::nanoseconds(patience).count());
    }
    // A stop somebody asked for is said once, as a typed event: whatever the ranks report from
    // here on is the teardown that was asked for, not a failure. (The watchdog's and a resource
    // limit's stops end a run that failed; they say so as errors.)
    if (first && asked_by_user(cause)) {
      Event e;
      e.kind = EventKind::RunStopped;
      e.rank = -1;
      e.t_begin_ns = e.t_end_ns = now_ns();
      e.code = static_cast<int32_t>(cause);
      e.text = to_string(cause);
      events.emit(std::move(e));
    }
    stop_requested = true;
    if (patience.count() > 0) ask_workers_to_stop();
    if (first && multi_node() && in_the_run && cause != StopCause::OtherNode) tell_other_nodes(cause, to_string(cause));
  }

  // ---- The nodes of a multi-node run (see node_rendezvous.h) ----

  // A joining node: node 0's store, with node 0's token, and its description of the run, which
  // this node adopts (its job, its run id, its event server).
  void join_node() {
    in_the_run = false;
    std::unique_ptr<StoreClient> client = connect_to_node0();
    {
      std::lock_guard<std::mutex> lock(store_mutex);
      store = std::move(client);
    }
    RunInvitation mine{run_id, options.nnodes, options.nproc_per_node(), 0, options.job};
    const RunInvitation run = join_run(*store, options.node_rank, mine, !options.run_id.empty());
    in_the_run = true;
    options.job = run.job;
    place_on_nodes(options.job, options.nnodes);
    run_id = run.run_id;
    event_addr = net::host_port(options.master_addr, run.event_port);
    joined.store(true, std::memory_order_release);
  }

  // Node 0 may not be up yet: tried again until the run's timeout, a second at a time, so that a
  // stop (Ctrl-C) is honoured while this node waits. A wrong token is refused at once.
  std::unique_ptr<StoreClient> connect_to_node0() {
    const int64_t deadline = now_ns() + std::chrono::nanoseconds(timeout()).count();
    const std::string where = net::host_port(options.master_addr, options.master_port);
    for (;;) {
      const auto left = std::chrono::milliseconds(std::max<int64_t>(1, (deadline - now_ns()) / 1'000'000));
      try {
        return std::make_unique<StoreClient>(options.master_addr, options.master_port, token,
                                             std::min(left, std::chrono::milliseconds(1000)));
      } catch (const TimeoutError& e) {
        if (stop_requested) throw StoppedWaiting();
        if (now_ns() < deadline) continue;
        if (dynamic_cast<const StoreHelloUnanswered*>(&e))  // the last try found a listener that said nothing
          throw InputError(fmt::format("node {} cannot join node 0's run within {} s: {} takes the connection but does "
                                       "not answer the store's hello: another program listens on that port, or node 0 "
                                       "is suspended (Ctrl-Z); node 0's store is at the --master-port node 0 was given",
                                       options.node_rank, timeout().count() / 1000, where));
        throw InputError(fmt::format("node {} cannot reach node 0's store at {} within {} s: is node 0 started, "
                                     "with this --master-addr and --master-port?",
                                     options.node_rank, where, timeout().count() / 1000));
      } catch (const TokenRefusedError& e) {
        throw InputError(fmt::format("node {} cannot join node 0's run: {}. A node joins with node 0's token: "
                                     "--join-file PATH (written by node 0's --join-file), or RINGLAB_TOKEN",
                                     options.node_rank, e.what()));
      } catch (const HostNotFoundError& e) {
        throw InputError(fmt::format("node {} cannot join node 0's run: {}; that address is node 0's --master-addr, "
                                     "given here or read from node 0's join file", options.node_rank, e.what()));
      } catch (const Error& e) {
        throw InputError(fmt::format("node {} cannot join node 0's run: {}; node 0's store is at the --master-port "
                                     "node 0 was given", options.node_rank, e.what()));
      }
    }
  }

  // A joined node: until node 0 says the run starts (node 0 itself waits up to the timeout for
  // the others); false when a stop came first.
  bool wait_for_node0_start() {
    try {
      return wait_for_start(*store, options.node_rank, timeout() + kNodeExchangeWait,
                            [&] { return stop_requested.load(); });
    } catch (const Error&) {
      // A stop asked for here was told to node 0, which then ends and closes its store: when
      // that comes before this loop looks at the stop again, it is still that stop.
      if (stop_requested) return false;
      throw;
    }
  }

  // Node 0 starts its workers once every node has joined; false when a stop came first, here or
  // on a node that joined (its note: Ctrl-C there stops the whole run).
  bool wait_for_other_nodes() {
    try {
      const bool met = wait_for_nodes(
          *store, options.nnodes, timeout(), net::host_port(options.master_addr, store_port()),
          [&] { return store_server->errors(); },
          [&] {
            note_refused_join();
            if (!stop_requested)
              if (const std::optional<AbortNote> note = read_abort(*store)) stop_for(*note);
            return stop_requested.load();
          });
      if (met) announce_start(*store);
      return met;
    } catch (const InputError& e) {
      try {
        tell_joined_nodes(*store, options.nnodes, e.what(), kNodeExchangeWait);
      } catch (const Error&) {
      }
      throw;
    }
  }

  // A node started with another token (another run's join file, a mistyped RINGLAB_TOKEN) is
  // refused at once and ends; node 0 waits on for the others. Said as it happens, not only when
  // the wait runs out.
  void note_refused_join() {
    for (const std::string& line : store_server->errors()) {
      if (line.find("wrong token") == std::string::npos) continue;
      std::lock_guard<std::mutex> lock(mutex);
      if (join_note.empty())
        join_note = fmt::format("a node was refused, its token not this run's ({}): was it given this run's join file or "
                                "RINGLAB_TOKEN? Node 0 waits on for the others until --timeout",
                                line);
      return;
    }
  }

  void tell_other_nodes(StopCause cause, const std::string& why) {
    try {
      std::lock_guard<std::mutex> lock(store_mutex);
      if (store) publish_abort(*store, {options.node_rank, cause, why});
    } catch (const Error&) {
      // node 0's store is gone: the other nodes' ranks lose their peers and end on their own
    }
  }

  // Node 0, its own ranks ended: a node suspended at the last look holds up the end; the program
  // says so (end_wait_note) rather than sit silent for up to `patience`.
  void note_end_wait(std::chrono::milliseconds patience) {
    const std::vector<int> suspended = node_watch->suspended();
    if (suspended.empty() || patience.count() == 0) return;
    std::lock_guard<std::mutex> lock(mutex);
    end_wait_note = fmt::format("the ranks here have ended; waiting at most {} s for node {}'s controller, suspended "
                                "with Ctrl-Z there, to say how its ranks ended (`fg` on node {})",
                                patience.count() / 1000, suspended.front(), suspended.front());
  }

  // How long node 0 waits at the end for a node whose controller is suspended (Ctrl-Z there) to
  // be resumed and say how its ranks ended: as long as a rank waits for a peer.
  std::chrono::milliseconds suspended_patience() const {
    return std::chrono::milliseconds(static_cast<int64_t>(options.job.timeout_s * 1000));
  }

  // What a joining node knows of the run's end without node 0's word: whether a stop reached it,
  // and how its own processes exited ("ranks 2 to 3 exited with code 0", or each one's end:
  // "rank 2 exit code 1, rank 3 killed by SIGTERM"). An exit code of 0 says only that a rank
  // stopped cleanly, not that the run reached its end.
  std::string how_ranks_here_ended(const std::vector<RankExit>& exits) {
    const StopInfo stop = stop_info();
    const std::string stopped =
        stop.cause == StopCause::None
            ? ""
            : fmt::format("the ranks were stopped ({}{}), and ", to_string(stop.cause),
                          stop.detail.empty() ? "" : ", " + stop.detail);
    if (std::all_of(exits.begin(), exits.end(), [](const RankExit& e) { return e.ok(); }))
      return stopped + ranks_of_node(options.node_rank) + " exited with code 0";
    std::string out = stopped;
    for (const RankExit& e : exits)
      out += fmt::format("{}{} {}", out.empty() ? "" : ", ", e.rank >= 0 ? fmt::format("rank {}", e.rank) : e.program,
                         e.describe());
    return out;
  }

  // "ranks 2 to 3": those of node `node` ("rank 1" for a node of one).
  std::string ranks_of_node(int node) const {
    const int first = node * options.nproc_per_node();
    if (options.nproc_per_node() == 1) return fmt::format("rank {}", first);
    return fmt::format("ranks {} to {}", first, first + options.nproc_per_node() - 1);
  }

  // Every few looks: has another node ended the run, or lost its controller? Its ranks' peers here
  // would only find out at their next collective, or at their timeout if they wait elsewhere. A
  // joining node beats meanwhile, so that node 0 can tell it is alive.
  void stop_when_another_node_ended() {
    if (!multi_node() || stop_requested || ++looks_since_abort_check < kLooksPerAbortCheck) return;
    looks_since_abort_check = 0;
    std::optional<AbortNote> note;
    std::vector<int> silent;
    try {
      std::lock_guard<std::mutex> lock(store_mutex);
      note = read_abort(*store);
      if (joining()) {
        beat(*store, options.node_rank);
      } else {
        silent = node_watch->silent(*store, kNodeSilence);
        std::lock_guard<std::mutex> state_lock(mutex);
        suspended_nodes = node_watch->suspended();
      }
    } catch (const Error& e) {
      if (joining()) note = AbortNote{0, StopCause::OtherNode, fmt::format("its store cannot be reached ({})", e.what())};
    }
    if (!note && !silent.empty())
      note = AbortNote{silent.front(), StopCause::OtherNode,
                       fmt::format("its controller stopped answering (killed, stopped by SIGSTOP, or its machine is gone): {} are lost",
                                   ranks_of_node(silent.front()))};
    if (note) stop_for(*note);
  }

  // The workers may all have stopped together (a stop asked for on another node reaches them
  // through the store) before the monitor's next look at the abort note: it still says why.
  void take_late_abort() {
    if (stop_requested) return;
    std::optional<AbortNote> note;
    try {
      std::lock_guard<std::mutex> lock(store_mutex);
      note = read_abort(*store);
    } catch (const Error&) {
    }
    if (note) stop_for(*note);
  }

  // A stop somebody asked for on another node stops this one the same way (an interrupted run
  // everywhere); a failure there ends this node's part of the run as a failure.
  void stop_for(const AbortNote& note) {
    request(asked_by_user(note.cause) ? note.cause : StopCause::OtherNode, kOtherNodeGrace, &note);
  }

  // After this node's workers ended: node 0 gathers every node's exits and says which rank failed
  // first; a joining node hands its exits over and takes node 0's verdict as its own.
  std::vector<RankExit> exchange_exits(std::vector<RankExit> exits) {
    take_late_abort();
    const bool failed = !std::all_of(exits.begin(), exits.end(), [](const RankExit& e) { return e.ok(); });
    if (failed && !exits.empty()) {
      const RankExit& first = exits.front();
      tell_other_nodes(StopCause::OtherNode,
                       first.rank >= 0 ? fmt::format("rank {} {}", first.rank, first.describe()) : first.describe());
    }
    std::lock_guard<std::mutex> lock(store_mutex);
    try {
      if (joining()) {
        publish_exits(*store, options.node_rank, exits);
        return exits;
      }
      // A person who stopped the run wants it over: a suspended node's exits would not come.
      suspended_wait = asked_by_user(stop_info().cause) ? std::chrono::milliseconds(0) : suspended_patience();
      note_end_wait(suspended_wait);
      std::vector<RankExit> remote = collect_exits(*store, options.nnodes, kNodeExchangeWait, suspended_wait,
                                                   *node_watch, lost_nodes);
      exits.insert(exits.end(), remote.begin(), remote.end());
    } catch (const Error&) {
      // the store is gone: what this node saw is all there is
    }
    return merge_exits(std::move(exits));
  }

  void exchange_verdict(RunResult& r) {
    if (!joining()) {
      say_lost_nodes(r);
      std::lock_guard<std::mutex> lock(store_mutex);
      try {
        publish_result(*store, r.ok ? "" : r.failure);
        wait_results_read(*store, options.nnodes, kNodeExchangeWait, *node_watch, lost_nodes);
      } catch (const Error&) {
      }
      return;
    }
    std::optional<std::string> verdict;
    try {
      std::lock_guard<std::mutex> lock(store_mutex);
      verdict = read_result(*store, options.node_rank, kNodeExchangeWait);
    } catch (const Error&) {
    }
    // Without node 0's word this node cannot know that the run went well: its own ranks may have
    // ended cleanly because node 0 asked them to stop before it was killed. Of the run it knows
    // only how its own processes ended (their events went to node 0).
    if (!verdict) {
      r.failure = fmt::format("node 0 did not say how the run ended: {}; here, {}",
                              was_suspended ? "it ended, or its controller went, while this node's controller was "
                                              "suspended (Ctrl-Z)"
                                            : "its controller is gone (killed, its machine lost, or stopped at once "
                                              "by a second Ctrl-C)",
                              how_ranks_here_ended(r.exits));
      r.ok = false;
    } else if (!verdict->empty()) {
      r.ok = false;
      r.failure = fmt::format("node 0 says: {}", *verdict);
    }
  }

  // Nodes whose controller never reported how its ranks ended come first in the verdict: what
  // the ranks here saw (a peer that closed its connection) is the echo of that.
  void say_lost_nodes(RunResult& r) const {
    if (lost_nodes.empty()) return;
    std::string lost;
    for (int node : lost_nodes) {
      if (!node_watch->is_suspended(node))
        lost += fmt::format("node {} ({}) was lost: its controller stopped answering (killed, stopped by SIGSTOP, "
                            "or its machine is gone)\n", node, ranks_of_node(node));
      else if (suspended_wait.count() == 0)
        lost += fmt::format("node {} ({}) did not report how its ranks ended: its controller was suspended (Ctrl-Z "
                            "there) when the run was stopped\n", node, ranks_of_node(node));
      else
        lost += fmt::format("node {} ({}) did not report how its ranks ended: its controller was suspended (Ctrl-Z "
                            "there) and not resumed within {} s of the end (--timeout)\n",
                            node, ranks_of_node(node), suspended_wait.count() / 1000);
    }
    lost.pop_back();  // its last newline
    r.ok = false;
    // A stop somebody asked for is the run's end, and says so first; the node that did not
    // report comes after it.
    if (r.interrupted()) {
      r.failure += (r.failure.empty() ? "" : "\n") + lost;
      return;
    }
    // Otherwise the ranks still there failed next, on the connections the lost node's ranks
    // held: their exit codes and errors follow, marked as what came after, not as a second cause.
    r.failure = lost + (r.failure.empty() ? "" : "\nafter that, on the nodes still answering:\n" + r.failure);
  }

  void ask_workers_to_stop() {
    std::lock_guard<std::mutex> lock(store_mutex);
    if (store) store->set(store_keys::kStop, {store_keys::kStopToEnd});
  }

  StopInfo stop_info() {
    std::lock_guard<std::mutex> lock(mutex);
    return StopInfo{stop_cause, stop_detail, !options.torch.empty(), stop_node, {}};
  }

  // A server that could not take a worker's connection (no descriptor or thread left) ends the
  // run: the rank behind it would only wait for its timeout, and every later one the same. It is
  // the run's root cause too when that rank failed first (its connection closed).
  void stop_at_server_limit() {
    const std::string limit = server_limit_failure();
    if (limit.empty()) return;
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (stop_cause != StopCause::None && stop_cause != StopCause::ResourceLimit) return;
      const RunFootprint f = estimate_footprint(options.job, {options.job.world_size / options.nnodes});
      stop_detail = fmt::format("the controller hit a limit, so the run cannot go on: {} (this run needs about {} "
                                "file descriptors in the controller, {} processes and threads in all)",
                                limit, f.controller_descriptors, f.threads);
    }
    request(StopCause::ResourceLimit, std::chrono::milliseconds(0));
  }

  std::string server_limit_failure() const {
    std::string failure = event_server ? event_server->limit_failure() : "";
    if (failure.empty() && store_server) failure = store_server->limit_failure();
    return failure;
  }

  // The controller's own word in the run's events (rank -1): a Log marker or an Error.
  void emit_note(EventKind kind, const std::string& text) {
    Event e;
    e.kind = kind;
    e.rank = -1;
    e.t_begin_ns = e.t_end_ns = now_ns();
    e.text = text;
    events.emit(std::move(e));
  }

  // The monitor thread's body. Whatever goes wrong here (a corrupt epoch checkpoint on restart,
  // a store that cannot bind, a worker that cannot be spawned) ends the run as a failure that
  // says so, instead of escaping the thread and aborting the whole program.
  void run_loop() {
    name_this_thread("run monitor");
    try {
      supervise();
    } catch (const StoppedWaiting&) {
      publish_stopped_before_start("node 0");
    } catch (const InputError& e) {  // says all there is to say: how this node's run was set up wrong
      give_up(e.what(), true);
    } catch (const PeerClosedError& e) {
      // Another node's connections all lead to node 0's store: lost there, node 0 is gone, as
      // node 0 says of a node whose controller stops answering.
      if (options.node_rank > 0 && in_the_run)
        give_up(fmt::format("node 0 was lost: its controller stopped answering (it ended, was killed, or the network "
                            "between the nodes failed), so this node's ranks were stopped; {}",
                            e.what()),
                true);
      else
        give_up(e.what());
    } catch (const std::exception& e) {
      give_up(e.what());
    } catch (...) {
      give_up("an exception that is not a std::exception");
    }
  }

  // Stopped (Ctrl-C, SIGTERM) while waiting for the nodes to meet: nothing ran, nothing failed.
  struct StoppedWaiting {};
  void publish_stopped_before_start(const std::string& waiting_for) {
    remove_checkpoints();
    RunResult r;
    r.job = options.job;
    const StopInfo stop = stop_info();
    r.stop_cause = stop.cause;
    r.stop_node = stop.node;
    r.failure = fmt::format("{}{}: stopped while waiting for {}", to_string(r.stop_cause),
                            stop.detail.empty() ? "" : " " + stop.detail, waiting_for);
    publish(std::move(r));
  }

  void give_up(const std::string& why, bool bare = false) {
    if (launcher) launcher->terminate_all(std::chrono::milliseconds(2000));
    if (multi_node() && in_the_run) tell_other_nodes(StopCause::OtherNode, why);
    remove_checkpoints();
    RunResult r;
    r.job = options.job;
    r.failure = bare ? why : fmt::format("the controller could not go on: {}", why);
    publish(std::move(r));
  }

  void publish(RunResult r) {
    keep_store_errors();
    r.connection_errors = connection_errors;
    if (event_server)  // one server for the whole run: read once, at the end
      for (std::string& e : event_server->errors()) r.connection_errors.push_back("event server: " + std::move(e));
    std::lock_guard<std::mutex> lock(mutex);
    result = std::move(r);
    cv.notify_all();
  }

  // What the store refused (a wrong token, a malformed frame, a silent client), kept across
  // store restarts so the run's report can show it.
  void keep_store_errors() {
    if (store_server)
      for (std::string& e : store_server->errors()) connection_errors.push_back(std::move(e));  // "store: ..." already
  }

  void supervise() {
    if (joining()) join_node();
    if (multi_node()) {
      // A joined node starts its workers when node 0 starts its own: stopped before that (or
      // while it was joining), it has none to stop, and tells node 0, which would otherwise wait
      // on for the nodes still to come. (request() tells it too once this node is in the run;
      // the first note is the one kept.) A stop may also come before node 0 reaches its wait
      // (its join file is written earlier): it still was waiting for the others.
      if (joining() && (stop_requested || !wait_for_node0_start())) {
        tell_other_nodes(stop_info().cause, "stopped before the run started");
        return publish_stopped_before_start("node 0 to start the run (it starts once every node has joined)");
      }
      if (!joining() && (stop_requested || !wait_for_other_nodes()))
        return publish_stopped_before_start("the other nodes to join");
      if (!joining()) node_watch = std::make_unique<NodeWatch>(options.nnodes);
      nodes_met.store(true, std::memory_order_release);
      launch(options.job, options.checkpoint_in);
    }
    JobConfig job = options.job;
    std::string checkpoint_in = options.checkpoint_in;
    std::vector<RankExit> exits;
    int restarts = 0;
    for (;;) {
      exits = wait_workers();
      const bool failed = !std::all_of(exits.begin(), exits.end(), [](const RankExit& e) { return e.ok(); });
      if (failed && restart(job, checkpoint_in, restarts, exits)) continue;
      std::optional<std::pair<int, std::string>> change;
      {
        std::lock_guard<std::mutex> lock(mutex);
        change.swap(pending_change);
      }
      const bool all_ok = std::all_of(exits.begin(), exits.end(), [](const RankExit& e) { return e.ok(); });
      if (!change || !all_ok || stop_requested || ::access(checkpoint_path.c_str(), R_OK) != 0) break;
      // Live change: the old set stopped at a step boundary and rank 0 left a checkpoint.
      job.world_size = change->first;
      job.backend = change->second;
      job.ranks_per_node = even_node_split(job.ranks_per_node, job.world_size);
      checkpoint_in = checkpoint_path + ".in";
      ::rename(checkpoint_path.c_str(), checkpoint_in.c_str());
      restart_store();
      Event changed;
      changed.kind = EventKind::WorldChange;
      changed.rank = -1;
      changed.t_begin_ns = changed.t_end_ns = now_ns();
      changed.value = job.world_size;
      changed.text = job.backend;
      events.emit(std::move(changed));
      launch(job, checkpoint_in);
    }
    // Every worker has ended and its events are in (or past the drain's wait): close the event
    // server so nothing reaches the sinks while the caller writes its outputs from them.
    if (event_server) event_server->stop();
    if (multi_node()) exits = exchange_exits(std::move(exits));
    StopInfo stop = stop_info();
    for (int node : lost_nodes)
      for (int local = 0; local < options.nproc_per_node(); ++local)
        stop.lost_ranks.push_back(node * options.nproc_per_node() + local);
    RunResult r = events.finish(exits, stop);
    if (multi_node()) exchange_verdict(r);
    if (!options.torch.empty()) note_torch_script(r);
    if (job.backend == "mpi") r.mpi_settings = openmpi_settings(options.placement);
    r.exits = exits;
    r.restarts = restarts;
    r.restart_notes = restart_notes;
    // A restart takes out the one-off faults; the run's report names what was asked for.
    if (restarts > 0) r.job.faults = options.job.faults;
    remove_checkpoints();
    publish(std::move(r));
  }

  // A script's run is named in its result; one that never reported (no ringlab_torch.watch in
  // it) has no training to show, whatever its exit, and the result must not pretend otherwise.
  void note_torch_script(RunResult& r) const {
    r.torch_script = options.torch.argv.front();
    r.failure += script_collectives_note(r.failure);
    // The script's job does not carry ringlab's --timeout; the run was watched with it.
    r.job.timeout_s = options.job.timeout_s;
    if (r.rank_count > 0 || !r.ok) return;
    r.ok = false;
    r.failure = fmt::format("{} ended without reporting to ringlab: no rank called ringlab_torch.watch(...) (README: "
                            "\"Watch your own PyTorch job\"), so there is no training to show", r.torch_script);
  }

  void remove_checkpoints() const {
    if (checkpoint_dir) checkpoint_dir->remove();
  }

  // A fresh store for the new set of workers: the old keys (stop flag, gate counters, gloo's
  // rendezvous) must not leak into the new rendezvous.
  void restart_store() {
    keep_store_errors();
    // The app's thread may be using the client (gate, live change) while it is replaced here.
    std::lock_guard<std::mutex> lock(store_mutex);
    store.reset();
    store_server.reset();
    store_server = std::make_unique<StoreServer>(options.master_addr, 0, token);
    const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(options.job.timeout_s * 1000));
    store = std::make_unique<StoreClient>(options.master_addr, store_server->port(), token, timeout);
    store->set(store_keys::kGateMode, {static_cast<uint8_t>(gated ? 1 : 0)});
    // A stop asked for while the old set was ending applies to the new one.
    if (stop_requested) store->set(store_keys::kStop, {store_keys::kStopToEnd});
  }
};

void require_torch_backend(const std::string& backend) {
  if (backend == "gloo") return;
  if (backend == "nccl") {
    const BackendInfo nccl = nccl_backend_info();
    if (!nccl.available)
      throw InputError("backend 'nccl' cannot run here: " + nccl.reason + " (a --torch script runs on --backend gloo here)");
    return;
  }
  throw InputError("--torch runs the script on PyTorch's own backends: --backend gloo (or nccl on GPUs), not '" +
                   backend + "'");
}

namespace {

// The run's id names its checkpoint folder and is printed in the command that joins the other
// nodes: a path separator, a space or a quote would break one or the other.
void check_run_id(const std::string& id) {
  constexpr size_t kLongest = 64;
  const bool plain = std::all_of(id.begin(), id.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
  if (!plain || id.size() > kLongest || id == "." || id == "..")
    throw InputError(fmt::format("--run-id '{}': use letters, digits, '-', '_' and '.' only, at most {} of them",
                                 id.size() > kLongest ? id.substr(0, kLongest) + "..." : id, kLongest));
}

// A dotted-quad that is no IPv4 address (999.1.1.1) would be looked up as a host name and fail
// only when the store binds it, in a system error's words; names are left to that lookup.
void check_master_addr(const std::string& addr) {
  const bool dotted_digits = !addr.empty() && std::all_of(addr.begin(), addr.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) || c == '.';
  });
  in_addr parsed{};
  if (dotted_digits && ::inet_pton(AF_INET, addr.c_str(), &parsed) != 1)
    throw InputError(fmt::format("--master-addr {}: not an IPv4 address (four numbers from 0 to 255, as 127.0.0.1)", addr));
}

}  // namespace

void ControllerOptions::validate() const {
  job.validate();
  // Before the multi-node checks: a --torch run across nodes is refused for what it is, not for a
  // missing --master-port that would not make it work either.
  if (!torch.empty()) {
    require_torch_backend(job.backend);
    if (nnodes > 1) throw InputError("--torch runs its script on one node: drop --nnodes and --node-rank");
    if (max_restarts > 0) throw InputError("--max-restarts restarts ringlab's workers, not a --torch script");
  }
  check_placement(placement, job, master_addr, nnodes);
  // OpenMPI's ranks on one machine talk through shared memory: "drop" would cut only mpirun's own
  // link to them, which nobody notices until the run ends, and then the run fails for it.
  if (job.backend == "mpi" && !placement.spans_hosts())
    for (const Fault& f : parse_faults(job))
      if (f.kind == FaultKind::Drop)
        throw InputError(fmt::format("--fault {}: the mpi backend's ranks on one machine talk through shared memory, "
                                     "not a connection a drop can close; use kill or delay, or --backend gloo",
                                     to_string(f)));
  if (nnodes < 1 || nnodes > kMaxWorldSize)
    throw InputError(fmt::format("--nnodes must be between 1 and {}, got {}", kMaxWorldSize, nnodes));
  if (node_rank < 0 || node_rank >= nnodes)
    throw InputError(fmt::format("--node-rank must be in [0, --nnodes={}), got {}", nnodes, node_rank));
  if (job.world_size % nnodes != 0)
    throw InputError(fmt::format("--nnodes {} needs the ranks of each node: give --nproc-per-node P (the world is then "
                                 "{} x P), or -n a multiple of {} (got {})", nnodes, nnodes, nnodes, job.world_size));
  // Port 0 means "any free port", which only node 0 would know: the others would wait for ever.
  if (nnodes > 1 && master_port == 0 && !(node_rank == 0 && port_in_join_file))
    throw InputError(fmt::format("--nnodes {} needs --master-port (1 to 65535): every node must be given the port "
                                 "node 0's store listens on (or node 0 --join-file FILE, which takes any free port "
                                 "and writes it there for the others)", nnodes));
  if (node_rank > 0 && token.empty())
    throw InputError(fmt::format("node {} joins node 0's run with node 0's token: give --join-file PATH (written by "
                                 "node 0's --join-file) or set RINGLAB_TOKEN", node_rank));
  if (nnodes > 1 && max_restarts > 0)
    throw InputError("--max-restarts works within one node: a restart across nodes is not supported");
  check_run_id(run_id);
  check_master_addr(master_addr);
  if (nnodes > 1 && interactive)
    throw InputError("the app runs one node; start a multi-node run with `ringlab run --nnodes N`");
}

Controller::Controller(ControllerOptions options, EventSink& events)
    : impl_(std::make_unique<Impl>(std::move(options), events)) {
  impl_->options.validate();
  impl_->gated = impl_->options.gated;
}

Controller::~Controller() {
  if (impl_->monitor.joinable()) {
    request_stop();
    impl_->monitor.join();
  }
}

void Controller::start() {
  if (impl_->monitor.joinable()) throw Error("this controller has already started a run");
  const ControllerOptions& o = impl_->options;
  check_run_fits(o.job, {o.job.world_size / o.nnodes, o.max_restarts > 0, o.job.backend == "mpi"});
  impl_->start_services();
  if (impl_->store) impl_->store->set(store_keys::kGateMode, {static_cast<uint8_t>(impl_->gated ? 1 : 0)});
  // Alone, the workers start now; with other nodes, once they have met (on the monitor thread).
  if (!impl_->multi_node()) impl_->launch(impl_->options.job, impl_->options.checkpoint_in);
  impl_->monitor = start_thread("the controller's monitor", [this] { impl_->run_loop(); });
}

bool Controller::running() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->monitor.joinable() && !impl_->result;
}

int64_t Controller::steps_done() const { return impl_->events.steps_done(); }

uint64_t Controller::events_received() const { return impl_->events.version(); }

std::string Controller::who_is_missing() const { return impl_->events.who_is_missing(); }

std::vector<std::string> Controller::rank_positions() const {
  return impl_->events.rank_positions(impl_->options.job.world_size);
}

RunResult Controller::wait() {
  if (!impl_->monitor.joinable()) throw Error("no run was started");
  impl_->monitor.join();
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return *impl_->result;
}

std::optional<RunResult> Controller::poll() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->result;
}

void Controller::request_stop(StopCause cause, std::chrono::milliseconds patience) { impl_->request(cause, patience); }

std::vector<std::string> Controller::scratch_files() const {
  if (!impl_->checkpoint_dir) return {};  // not started: nothing made yet
  const std::string& p = impl_->checkpoint_path;
  return {p, p + ".in", p + ".resume", impl_->epoch_checkpoint_path(), impl_->checkpoint_dir->held_marker(),
          impl_->checkpoint_dir->path()};  // the directory last: removed once empty
}

void Controller::set_gated(bool on) {
  impl_->gated = on;
  std::lock_guard<std::mutex> lock(impl_->store_mutex);
  if (impl_->store) impl_->store->set(store_keys::kGateMode, {static_cast<uint8_t>(on ? 1 : 0)});
}

bool Controller::gated() const { return impl_->gated; }

void Controller::release_gate() {
  std::lock_guard<std::mutex> lock(impl_->store_mutex);
  if (impl_->store) impl_->store->add(store_keys::kGateReleased, 1);
}

void Controller::change_world(int world_size, const std::string& backend) {
  if (impl_->multi_node()) throw InputError("a live change of the world works within one node");
  JobConfig probe = impl_->options.job;
  probe.world_size = world_size;
  probe.backend = backend;
  probe.ranks_per_node.clear();  // a new world on this one machine
  probe.validate();
  // The new set of workers resumes from rank 0's checkpoint.
  if (const uint64_t bytes = estimate_footprint(probe, {}).checkpoint_bytes; bytes > kMaxCheckpointBytes)
    throw InputError(fmt::format("a live change goes through a checkpoint, and this model's would take {}, more "
                                 "than the {} a checkpoint may hold", describe_bytes(bytes),
                                 describe_bytes(kMaxCheckpointBytes)));
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->pending_change = std::make_pair(world_size, backend);
  }
  std::lock_guard<std::mutex> lock(impl_->store_mutex);
  if (impl_->store) impl_->store->set(store_keys::kStop, {1});
}

void Controller::kill_rank(int rank) {
  std::lock_guard<std::mutex> lock(impl_->launcher_mutex);
  Launcher* launcher = impl_->launcher.get();
  if (!launcher) throw InputError(fmt::format("kill rank {}: no run is going", rank));
  const LaunchSpec& spec = launcher->spec();
  if (spec.placement.srun)
    throw InputError(fmt::format("kill rank {}: srun owns the rank processes; use the fault kill:{}@STEP instead",
                                 rank, rank));
  if (spec.use_mpirun)
    throw InputError(fmt::format("kill rank {}: with the MPI backend mpirun owns the rank processes; "
                                 "use the fault kill:{}@STEP instead", rank, rank));
  const std::vector<pid_t> pids = launcher->pids();
  const int local = rank - spec.node_rank * spec.local_world_size;
  if (local < 0 || local >= static_cast<int>(pids.size()))
    throw InputError(fmt::format("kill rank {}: this node runs ranks {} to {}", rank,
                                 spec.node_rank * spec.local_world_size,
                                 spec.node_rank * spec.local_world_size + static_cast<int>(pids.size()) - 1));
  // Only a child that is still running: one that has ended may be reaped, and its pid reused.
  if (!launcher->signal_process(static_cast<size_t>(local), SIGKILL))
    throw InputError(fmt::format("kill rank {}: its process has already ended", rank));
  Event e;
  e.kind = EventKind::Fault;
  e.rank = rank;
  e.src = -1;  // injected by the controller, not by the rank's own fault plan
  e.code = static_cast<int32_t>(FaultKind::Kill);
  e.t_begin_ns = e.t_end_ns = now_ns();
  e.text = "kill: SIGKILL from the controller";
  impl_->events.emit(std::move(e));
}

const ControllerOptions& Controller::options() const { return impl_->options; }
const std::string& Controller::token() const { return impl_->token; }
const std::string& Controller::run_id() const { return impl_->run_id; }
uint16_t Controller::store_port() const { return impl_->store_port(); }
bool Controller::say_suspended(bool suspended) {
  if (impl_->options.node_rank == 0 || !impl_->joined.load(std::memory_order_acquire)) return false;
  if (suspended) impl_->was_suspended = true;
  std::lock_guard<std::mutex> lock(impl_->store_mutex);
  try {
    if (!impl_->store) return false;
    publish_suspended(*impl_->store, impl_->options.node_rank, suspended);
    if (!suspended) beat(*impl_->store, impl_->options.node_rank);
    return true;
  } catch (const Error&) {
    return false;  // node 0's store is gone: the monitor finds out at its next look and says so
  }
}

std::vector<int> Controller::suspended_nodes() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->suspended_nodes;
}

std::string Controller::join_note() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->join_note;
}

std::string Controller::end_wait_note() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->end_wait_note;
}

bool Controller::nodes_met() const { return impl_->nodes_met.load(std::memory_order_acquire); }
bool Controller::joined() const { return impl_->joined.load(std::memory_order_acquire); }

}  // namespace ringlab

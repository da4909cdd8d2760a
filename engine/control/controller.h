#pragma once
// The controller, like torchrun's agent: hosts the rendezvous store and the event server,
// starts one worker process per rank (or mpirun), watches them, and turns their events into
// a RunResult. `ringlab run` and the desktop app both drive a run through this class.
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/slowest_step.h"
#include "engine/events/event.h"
#include "engine/job/job_config.h"
#include "engine/control/launcher.h"
#include "engine/control/run_history.h"

namespace ringlab {

// StopCause (who or what ended a run before its end) is in events/event.h: RunStopped carries it.

// "SIGINT (Ctrl-C)", "SIGTERM", "the Stop button", ...: what the messages and the report say.
const char* to_string(StopCause cause);
// The cause a signal to the controller stands for (SIGINT: Interrupt, SIGTERM: Terminate, SIGHUP:
// Hangup).
StopCause stop_cause_for_signal(int signal);
// A stop the user asked for (the Stop button, Ctrl-C, SIGTERM), as opposed to the controller's own.
bool asked_by_user(StopCause cause);

// How a run was stopped, for its result: the cause, and what the controller adds to it (which
// limit was hit).
struct StopInfo {
  StopCause cause = StopCause::None;
  std::string detail;
  bool script = false;  // the ranks were a PyTorch script's: no stop vote, a stop is SIGTERM
  int node = -1;        // a run over several nodes: the node where the stop came from; -1 in a one-node run
  // Ranks of nodes whose controller never said how they ended (killed, suspended, gone): what the
  // run knows of them is their last report, their unsent events gone with their node.
  std::vector<int> lost_ranks;
};

// A PyTorch script run in place of ringlab's own workers (`ringlab run --torch`): started once per
// rank with torchrun's environment (MASTER_PORT a free port for PyTorch's own store, apart from
// ringlab's servers), plus the event server's address and the run's token, which the script's
// ringlab_torch watcher reports to. Supervised like workers.
struct TorchScript {
  std::string python;               // the interpreter
  std::vector<std::string> argv;    // the script, then its arguments
  std::string python_path;          // the folder holding ringlab_torch, put first on PYTHONPATH
  bool teaching = false;            // ask the watcher to run every bucket as a drawn ring
  bool empty() const { return argv.empty(); }
};

// A --torch script runs on PyTorch's own process groups: gloo, or NCCL where a GPU is. Throws
// InputError naming what to give instead (ringlab's MPI backend is its own workers').
void require_torch_backend(const std::string& backend);

struct ControllerOptions {
  JobConfig job;
  std::string master_addr = "127.0.0.1";  // where the store and event server listen
  uint16_t master_port = 0;                // 0: any free port
  // Node 0 hands its store's port to the other nodes in a join file: over several nodes too,
  // master_port 0 then means any free port (the others read it from the file).
  bool port_in_join_file = false;
  int nnodes = 1;
  int node_rank = 0;
  // The run's token and id. Empty: a fresh random one, which only node 0 may make up; a node
  // that joins (node_rank > 0) must be given node 0's token, and is checked against its run id
  // when one is given.
  std::string token;
  std::string run_id;
  bool interactive = false;                // workers honour the gate and live changes (the app)
  bool gated = false;                      // step-through: ring steps wait for release_gate()
  std::string executable;                  // the worker binary; default: this executable
  std::string checkpoint_in;               // resume from this checkpoint (live change, restart)
  int max_restarts = 0;                    // restart the whole group from the last epoch checkpoint
  // Keep every rank's shard of every epoch and loss of every step (RunResult::history, on disk)
  // for a report; without it only each rank's first shard is kept (the app draws from events).
  bool keep_history = true;
  // Ranks beyond this machine: mpirun across hosts (--hosts, --hostfile), or srun (--launcher).
  Placement placement;
  TorchScript torch;                       // non-empty: run this script instead of ringlab's workers

  int nproc_per_node() const { return job.world_size / nnodes; }

  // Throws InputError naming the flag: the job, and how the nodes of a run find each other.
  // The Controller checks it; `ringlab run` calls it first, before it checks its output files.
  void validate() const;
};

struct RunResult {
  bool ok = false;
  std::string failure;                  // which rank failed, how, and where each rank was
  StopCause stop_cause = StopCause::None;  // who or what stopped the run, if anybody did
  bool interrupted() const { return asked_by_user(stop_cause); }
  int stop_node = -1;  // a run over several nodes, stopped: the node where the stop came from
  // Who stopped it from outside ringlab, when that is the failure's cause ("rank 2 was ended by a
  // SIGTERM that ringlab did not send ...", "srun was stopped by SIGTERM ..."); "" when nobody did.
  std::string stopped_from_outside;
  JobConfig job;
  int64_t samples_per_rank = 0;   // len(DistributedSampler): the indices each rank gets an epoch
  int64_t batches_per_epoch = 0;
  std::vector<float> allreduce_demo_input;
  std::vector<float> allreduce_demo_output;
  std::vector<double> epoch_mse;        // MSE over the whole dataset after each epoch (rank 0)
  int rank_count = 0;                   // ranks that reported anything (highest rank + 1)
  // Each rank's shard of every epoch and loss at every step, on disk (it grows with the run).
  std::shared_ptr<const RunHistory> history;
  int64_t steps = 0;
  double train_seconds = 0.0;
  double us_per_step = 0.0;             // training loop only, excluding start-up
  SlowestStep slowest_step;             // rank 0's, its span from begin to end
  std::vector<float> final_parameters;  // rank 0's model at the end
  int restarts = 0;                     // how often the group was restarted after a failure
  // One line each: where it resumed and the failure that caused it ("restart 1 of 2, from the
  // start (no epoch had ended), after: rank 2 failed: killed by SIGKILL").
  std::vector<std::string> restart_notes;
  std::string flight_report;            // JSON lining up the ranks' flight recorders ("" if none)
  std::vector<RankExit> exits;          // how each process of the last set ended, the failed one first
  std::string torch_script;             // the PyTorch script that ran instead of ringlab's workers ("" none)
  // The script's training fields it did not report (unreported_training_fields): `job` holds
  // ringlab's defaults there; "epochs" when nothing said where its epochs began (job.epochs is
  // then the 1 it seemed to train in). Empty for ringlab's own workers.
  std::vector<std::string> job_not_reported;
  // The OpenMPI settings (OMPI_MCA_*) mpirun gave the ranks of an MPI run: ringlab's defaults, or
  // the caller's own where set. Empty for other backends.
  std::map<std::string, std::string> mpi_settings;
  // Connections the store or event server refused or dropped (wrong token, malformed frame,
  // silent client, a client gone mid-wait), "store: ..." / "event server: ...".
  std::vector<std::string> connection_errors;
};

class Controller {
 public:
  // Every event of the run is passed on to `events` (after the controller has taken what the
  // result needs), from the event server's threads: the sink must be thread-safe.
  Controller(ControllerOptions options, EventSink& events);
  ~Controller();  // stops and reaps every worker
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  void start();                      // non-blocking: workers are running when it returns
  bool running() const;
  RunResult wait();                  // blocks until the run ends (bounded by the job's timeout)
  std::optional<RunResult> poll();   // the result once the run has ended, without blocking
  int64_t steps_done() const;        // rank 0's training steps so far (less any redone after a restart)
  // Where each rank is by its last report, a line each ("rank 1: no step or collective reported").
  std::vector<std::string> rank_positions() const;
  uint64_t events_received() const;  // every event any rank has sent so far
  std::string who_is_missing() const;  // RunAccumulator::who_is_missing, now
  // Ends the run early. The workers are asked to stop together at their next step boundary,
  // where each reports its last state and exits; those still running after `patience` are
  // terminated (SIGTERM, then SIGKILL). 0: terminate them at once. The first cause given is the
  // one the result names; a later request can only shorten the patience.
  void request_stop(StopCause cause = StopCause::StopButton,
                    std::chrono::milliseconds patience = std::chrono::milliseconds(0));
  // Files the run may leave behind (its checkpoints) if the process ends without stopping it,
  // for a handler that must remove them without the controller's help (see InterruptSignals).
  // None before start().
  std::vector<std::string> scratch_files() const;

  // Step-through: in gated mode every rank's ring waits before each ring step until released.
  void set_gated(bool on);
  bool gated() const;
  void release_gate();               // lets every rank take one more ring step

  // Live change of world size or backend: the workers stop at the next step boundary, rank 0
  // checkpoints the model and optimizer, and a new set of workers resumes from it; the sampler
  // re-shards for the new world size.
  void change_world(int world_size, const std::string& backend);

  // The failure lab's "kill rank r now": a real SIGKILL to that rank's worker process, as if its
  // machine lost power. It is recorded as a Fault event, like an injected kill; the run then
  // fails (or restarts, with max_restarts) as for any dead rank. Throws InputError when no run
  // is going, the rank is not one of this node's, its process has ended, or the backend is MPI
  // (mpirun owns the rank processes there; use the kill:R@S fault instead).
  void kill_rank(int rank);

  const ControllerOptions& options() const;
  // The run's token and id, as the controller settled them (made up, or given in the options).
  const std::string& token() const;
  const std::string& run_id() const;
  // The port node 0's store listens on, once started: master_port, or the free one it took.
  uint16_t store_port() const;
  // A multi-node run: every node has joined and the workers start (on a joining node, once node
  // 0 said so); its options() then hold the job node 0 published.
  bool nodes_met() const;
  // A joining node: node 0 has taken it into the run (options() now holds node 0's job and the
  // run's id); its workers start once every node has joined (nodes_met).
  bool joined() const;
  // A joined node whose controller stops for Ctrl-Z tells node 0 first (true), and again once
  // resumed (false); node 0 then waits for it instead of taking its still beats for a lost node.
  // False when node 0 could not be told (this node has not joined yet, or its store is gone).
  bool say_suspended(bool suspended);
  // Node 0: the nodes whose controllers said they are suspended, as the monitor last looked.
  std::vector<int> suspended_nodes() const;
  // Node 0: why the run's end is waiting, once its own ranks have ended ("" when it is not): a
  // node whose controller is suspended has not said how its ranks ended.
  std::string end_wait_note() const;
  // Node 0, waiting for the other nodes: a node it refused for a token not this run's ("" when none).
  std::string join_note() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ringlab

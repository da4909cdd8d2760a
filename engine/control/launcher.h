#pragma once
// Starts one real OS process per rank (or one `mpirun` that starts them), watches them, and
// tears every one of them down when one fails: what torchrun's elastic agent does for a node.
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/events/rank_exit.h"

namespace ringlab {

struct LaunchSpec {
  int world_size = 1;        // total ranks across all nodes
  int nnodes = 1;
  int node_rank = 0;
  int local_world_size = 1;  // ranks started on this node
  bool use_mpirun = false;   // MPI backend: one `mpirun -np local_world_size` instead of N forks
  std::string executable;    // default: this executable (/proc/self/exe)
  std::vector<std::string> worker_args;      // e.g. {"worker", "--job-json", "..."}
  std::map<std::string, std::string> env;    // extra environment for every rank
  std::string master_addr = "127.0.0.1";
  uint16_t master_port = 0;  // 0: start() picks a free port on master_addr (see spec())
};


class Launcher {
 public:
  explicit Launcher(LaunchSpec spec);
  ~Launcher();  // terminates anything still running
  Launcher(const Launcher&) = delete;
  Launcher& operator=(const Launcher&) = delete;

  // Sets RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT (+ spec.env)
  // for each process and starts them. Throws Error when a process cannot be started.
  void start();

  // Polls the processes until all exited, one failed, `timeout` passed or `should_stop()` says so.
  // On a failure the others get SIGTERM, then SIGKILL after `grace`; no orphan is left behind.
  // Returns every process's exit, failure first.
  std::vector<RankExit> wait(std::chrono::milliseconds timeout,
                             const std::function<bool()>& should_stop = {},
                             std::chrono::milliseconds grace = std::chrono::milliseconds(1500));

  // SIGTERM to every process still running (and to its process group, so a rank's own
  // children go too), SIGKILL after `grace`, then reaps them all. Safe from another thread.
  void terminate_all(std::chrono::milliseconds grace);
  std::vector<pid_t> pids() const;
  // Sends `signal` to the index-th process (local rank order) if it is still running; false when
  // it has ended. Checked and sent under the lock that reaping takes, so the pid cannot have been
  // reaped and reused by another process in between.
  bool signal_process(size_t index, int signal);
  bool running() const;
  const LaunchSpec& spec() const;  // as started: the executable and master_port resolved

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace ringlab

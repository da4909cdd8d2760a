#pragma once
// Starts one real OS process per rank (or one `mpirun` or `srun` that starts them), watches
// them, and tears every one of them down when one fails: what torchrun's elastic agent does for a
// node. mpirun may start ranks on other hosts too (through its own agent, ssh by default), and
// srun on the nodes of the Slurm allocation it runs in.
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/events/rank_exit.h"
#include "engine/job/job_config.h"

namespace ringlab {

// One host of a run that mpirun spreads over several: mpirun's -H host:slots, a hostfile's line.
struct LaunchHost {
  std::string name;
  int slots = 1;
};

// Where the ranks of a run are started beyond this machine's own processes: `ringlab run`'s
// --hosts, --hostfile and --launcher.
struct Placement {
  std::vector<LaunchHost> hosts;  // mpirun -H (or what the hostfile says); empty: this machine
  std::string hostfile;           // mpirun --hostfile, when the hosts came from one
  bool srun = false;              // one `srun --ntasks=world_size` inside a Slurm allocation
  bool spans_hosts() const { return !hosts.empty(); }
};

// This process's environment, by name: what every process it starts inherits.
std::map<std::string, std::string> parent_environment();

// "h1:2,h2:2", as mpirun's -H takes them (a host without ":N" has one slot). Throws InputError
// naming --hosts and the item that is wrong.
std::vector<LaunchHost> parse_hosts(const std::string& text);
// An OpenMPI hostfile: one host a line, "name slots=N" (max_slots=N is allowed and left to
// mpirun), '#' starts a comment. Every line must give slots=N: without it OpenMPI counts the
// host's cores, which ringlab cannot know, and so neither the world size. Throws InputError
// naming the file and the line.
std::vector<LaunchHost> read_hostfile(const std::string& path);
// The placement `ringlab run`'s flags ask for: --hosts TEXT or --hostfile PATH (not both; "" when
// not given), --launcher auto|srun. Throws InputError naming the flag.
Placement placement_from_flags(const std::string& hosts, const std::string& hostfile, const std::string& launcher);
int total_slots(const std::vector<LaunchHost>& hosts);
// JobConfig::ranks_per_node for this placement, node 0 first: the hosts' slots in their order (a
// host named twice holds both its counts), or, for srun, the allocation's tasks per node
// (SLURM_TASKS_PER_NODE) where they add up to the world size. Empty when that is one node, or
// when the numbers do not add up to `world_size` (check_placement then says why).
std::vector<int> planned_ranks_per_node(const Placement& placement, int world_size);
// Whether `host` is this machine: a loopback address or "localhost", this machine's host name,
// or an address of one of its interfaces. Names are compared, never looked up (no DNS).
bool is_this_machine(const std::string& host);
// Throws InputError naming the flags when the placement cannot run this job: hosts need
// --backend mpi and one controller (no --nnodes), a world size equal to their slots, and a
// --master-addr the other hosts can reach (not loopback, not a wildcard); srun needs a Slurm
// allocation (SLURM_JOB_ID), a backend it can start (gloo or nccl), and the same reachable
// --master-addr when the allocation has several nodes.
void check_placement(const Placement& placement, const JobConfig& job, const std::string& master_addr, int nnodes);

struct LaunchSpec {
  int world_size = 1;        // total ranks across all nodes
  int nnodes = 1;
  int node_rank = 0;
  int local_world_size = 1;  // ranks started on this node
  bool use_mpirun = false;   // MPI backend: one `mpirun -np local_world_size` instead of N forks
  // mpirun across placement.hosts (then nnodes is 1 and world_size their slots), or srun: one
  // `srun --ntasks=world_size` starts the ranks, which read their place from Slurm's variables.
  Placement placement;
  std::string executable;    // default: this executable (/proc/self/exe)
  std::vector<std::string> worker_args;      // e.g. {"worker", "--job-json", "..."}
  std::map<std::string, std::string> env;    // extra environment for every rank
  std::string master_addr = "127.0.0.1";
  uint16_t master_port = 0;  // 0: start() picks a free port on master_addr (see spec())
  // Each rank's stdout and stderr through this process, on whole lines (output_relay.h): a
  // script's ranks print at once. Not for mpirun or srun, which relay their ranks' output themselves.
  bool relay_output = false;
};


class Launcher {
 public:
  explicit Launcher(LaunchSpec spec);
  ~Launcher();  // terminates anything still running
  Launcher(const Launcher&) = delete;
  Launcher& operator=(const Launcher&) = delete;

  // Sets RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT (+ spec.env)
  // for each process and starts them (mpirun and srun get MASTER_* and spec.env, and pass them on
  // by name: no value, the run's token least of all, is ever on a command line). Throws Error
  // when a process cannot be started.
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
  // With spec.relay_output: waits (at most `timeout`) until what the ranks wrote has been
  // written out here; false when a pipe stayed open (a child a rank left running). True without.
  bool drain_output(std::chrono::milliseconds timeout);
  // The last lines the process of `rank` wrote to stderr, oldest first (with spec.relay_output).
  std::vector<std::string> stderr_tail(int rank) const;
  const LaunchSpec& spec() const;  // as started: the executable and master_port resolved

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace ringlab

#pragma once
// Where a worker stands in the run, read from its environment the way torchrun's workers do,
// so `ringlab worker` can be started by the controller, by torchrun-style hand scripts, by
// `mpirun` (OpenMPI's OMPI_COMM_WORLD_* variables) or by Slurm's `srun` (SLURM_PROCID, ...).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ringlab {

struct WorkerEnv {
  int rank = 0;
  int local_rank = 0;
  int world_size = 1;
  int local_world_size = 1;
  int group_rank = 0;      // the node's index (torchrun's GROUP_RANK, Slurm's SLURM_NODEID)
  std::string master_addr = "127.0.0.1";
  uint16_t master_port = 29500;
  std::string event_addr;  // empty: no event server (RINGLAB_EVENT_ADDR unset)
  uint16_t event_port = 0;
  std::string run_id;
  std::string token;
  bool from_mpi = false;   // rank and size came from OpenMPI's variables
  bool from_slurm = false; // rank and size came from Slurm's (a task of an srun)

  std::string describe() const;  // "rank 1 of 4 (local 1 of 4), master 127.0.0.1:29500"
};

// Reads, in order of precedence:
//   rank and sizes: OMPI_COMM_WORLD_RANK / _SIZE / _LOCAL_RANK / _LOCAL_SIZE (when mpirun started
//     us), else RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK (torchrun), else, in a
//     task that srun started (SLURM_STEP_ID is set), SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID,
//     this node's count in SLURM_STEP_TASKS_PER_NODE and SLURM_NODEID, else one process alone;
//     without LOCAL_* every rank is taken to be on this node (local rank = rank).
//   MASTER_ADDR (default 127.0.0.1; in an srun task the first host of SLURM_STEP_NODELIST, else
//     of SLURM_JOB_NODELIST, where srun starts rank 0), MASTER_PORT (default 29500): the
//     rendezvous store, which rank 0 hosts itself when no controller started the run.
//   RINGLAB_EVENT_ADDR ("host:port" or "[v6]:port"), RINGLAB_RUN_ID, RINGLAB_TOKEN.
// Throws InputError naming the variable and its value when one is not a number, out of range,
// or inconsistent with another: "RANK=5 but WORLD_SIZE=4: RANK must be below WORLD_SIZE".
WorkerEnv read_worker_env();

// The same from explicit variables (a missing key is an unset variable).
WorkerEnv parse_worker_env(const std::map<std::string, std::string>& vars);

// The first host of a Slurm hostlist: "node[01-03,07],gpu5" is node01, "rack[2-3]-n[1-4]" is
// rack2-n1. Throws InputError naming `what` (the variable and its value) when it is malformed.
std::string first_slurm_host(const std::string& hostlist, const std::string& what);
// Slurm's tasks per node, node 0 first: "2(x3),1" is {2, 2, 2, 1}. Throws InputError naming `what`.
std::vector<int> parse_slurm_tasks_per_node(const std::string& text, const std::string& what);

}  // namespace ringlab

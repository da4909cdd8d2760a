#pragma once
// Where a worker stands in the run, read from its environment the way torchrun's workers do,
// so `ringlab worker` can be started by the controller, by torchrun-style hand scripts, or by
// `mpirun` (OpenMPI's OMPI_COMM_WORLD_* variables).
#include <cstdint>
#include <map>
#include <string>

namespace ringlab {

struct WorkerEnv {
  int rank = 0;
  int local_rank = 0;
  int world_size = 1;
  int local_world_size = 1;
  std::string master_addr = "127.0.0.1";
  uint16_t master_port = 29500;
  std::string event_addr;  // empty: no event server (RINGLAB_EVENT_ADDR unset)
  uint16_t event_port = 0;
  std::string run_id;
  std::string token;
  bool from_mpi = false;   // rank and size came from OpenMPI's variables

  std::string describe() const;  // "rank 1 of 4 (local 1 of 4), master 127.0.0.1:29500"
};

// Reads, in order of precedence:
//   rank and sizes: OMPI_COMM_WORLD_RANK / _SIZE / _LOCAL_RANK / _LOCAL_SIZE (when mpirun started
//     us), else RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE (torchrun), else one process alone;
//     without LOCAL_* every rank is taken to be on this node (local rank = rank).
//   MASTER_ADDR (default 127.0.0.1), MASTER_PORT (default 29500): the rendezvous store.
//   RINGLAB_EVENT_ADDR ("host:port" or "[v6]:port"), RINGLAB_RUN_ID, RINGLAB_TOKEN.
// Throws InputError naming the variable and its value when one is not a number, out of range,
// or inconsistent with another: "RANK=5 but WORLD_SIZE=4: RANK must be below WORLD_SIZE".
WorkerEnv read_worker_env();

// The same from explicit variables (a missing key is an unset variable).
WorkerEnv parse_worker_env(const std::map<std::string, std::string>& vars);

}  // namespace ringlab

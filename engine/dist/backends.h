#pragma once
// Which process groups this build can make, and the one place that makes them.
// list_backends() and require_backend() are declared in process_group.h.
#include <chrono>
#include <memory>
#include <string>

#include "engine/dist/process_group.h"

namespace ringlab {

class StoreClient;

// The backends' settings read from the environment (RINGLAB_GLOO_MESSAGES): throws
// InputError naming a variable whose value is not one of those accepted. Called first thing by
// every command, so that a typo is refused before any process starts, not by each rank.
void check_backend_environment();

// Joins the process group of `backend` ("gloo", "mpi", "nccl") as `rank` of `size`.
// gloo and nccl rendezvous through `store`; MPI takes rank and size from mpirun (pass -1 to
// accept them; other values are checked against what mpirun says). Throws InputError naming
// the backend and listing the available ones when this build cannot run it.
std::unique_ptr<ProcessGroup> make_process_group(const std::string& backend, int rank, int size,
                                                 StoreClient* store, std::chrono::milliseconds timeout);

// The NCCL backend as the backend list shows it: usable, or why not ("built without CUDA",
// "no CUDA device", one GPU per rank needed, ...).
BackendInfo nccl_backend_info(int world_size = 1);

}  // namespace ringlab

#pragma once
// Which process groups this build can make, and the one place that makes them.
// list_backends() and require_backend() are declared in process_group.h.
#include <chrono>
#include <memory>
#include <string>

#include "engine/dist/process_group.h"

namespace ringlab {

class StoreClient;

// Joins the process group of `backend` ("gloo", "mpi", "nccl") as `rank` of `size`.
// gloo and nccl rendezvous through `store`; MPI takes rank and size from mpirun (pass -1 to
// accept them; other values are checked against what mpirun says). Throws InputError naming
// the backend and listing the available ones when this build cannot run it.
std::unique_ptr<ProcessGroup> make_process_group(const std::string& backend, int rank, int size,
                                                 StoreClient* store, std::chrono::milliseconds timeout);

// Whether the NCCL backend can run here. This is the seam for the NCCL process group: for now it
// answers "built without CUDA" or "no CUDA device" (or that the group is not built yet); when the
// group lands in engine/dist/nccl, its own nccl_availability() replaces this one there and
// make_process_group() hands "nccl" to it.
BackendInfo nccl_availability();

}  // namespace ringlab

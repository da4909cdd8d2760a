#include "engine/dist/backends.h"

#include <csignal>
#include <cstdlib>
#include <string>
#include <vector>

#include "engine/core/error.h"
#include "engine/net/store.h"

#ifdef RINGLAB_HAVE_GLOO
#include "engine/dist/gloo/gloo_process_group.h"
#endif
#ifdef RINGLAB_HAVE_MPI
#include "engine/dist/mpi/mpi_process_group.h"
#endif
#include "engine/dist/gpu_plugin.h"

namespace ringlab {
namespace {

BackendInfo gloo_availability() {
#ifdef RINGLAB_HAVE_GLOO
  return {"gloo", true, ""};
#else
  return {"gloo", false, "built without gloo"};
#endif
}

BackendInfo mpi_availability() {
#ifdef RINGLAB_HAVE_MPI
  return {"mpi", true, ""};
#else
  return {"mpi", false, "built without MPI"};
#endif
}

std::string available_names() {
  std::string names;
  for (const BackendInfo& b : list_backends())
    if (b.available) names += (names.empty() ? "" : ", ") + b.name;
  return names.empty() ? "none" : names;
}

}  // namespace

BackendInfo nccl_backend_info(int world_size) {
  std::string why;
  const GpuBackendApi* gpu = gpu_backend(&why);
  return gpu ? gpu->nccl_backend_info(world_size) : BackendInfo{"nccl", false, why};
}

std::vector<BackendInfo> list_backends() {
  return {gloo_availability(), mpi_availability(), nccl_backend_info()};
}

// Only the backend asked for is looked at: asking about NCCL loads the GPU plugin (cuBLAS and
// NCCL, ~150 MB per process), which a gloo or MPI rank must not pay for.
void require_backend(const std::string& name) {
  BackendInfo b;
  if (name == "gloo") b = gloo_availability();
  else if (name == "mpi") b = mpi_availability();
  else if (name == "nccl") b = nccl_backend_info();
  else throw InputError("unknown backend '" + name + "' (available: " + available_names() + ")");
  if (!b.available)
    throw InputError("backend '" + name + "' cannot run here: " + b.reason + " (available: " + available_names() + ")");
}

void check_backend_environment() {
#ifdef RINGLAB_HAVE_GLOO
  (void)gloo_messages_from_env();
#endif
}

std::unique_ptr<ProcessGroup> make_process_group(const std::string& backend, int rank, int size,
                                                 StoreClient* store, std::chrono::milliseconds timeout) {
  require_backend(backend);
#ifdef RINGLAB_HAVE_GLOO
  if (backend == "gloo") {
    if (!store) throw Error({rank, "gloo.connect", -1}, "the gloo backend needs a store to rendezvous");
    const char* master = std::getenv("MASTER_ADDR");
    const GlooMessages messages = gloo_messages_from_env();
    // A rank ignores SIGPIPE, as a Python process running PyTorch does: gloo writes to its
    // sockets without MSG_NOSIGNAL, and a write to a peer that has gone must fail with EPIPE
    // (reported, naming the peer) instead of killing this rank without a word.
    ::signal(SIGPIPE, SIG_IGN);
    return std::make_unique<GlooProcessGroup>(rank, size, *store, timeout,
                                              gloo_host_for(master ? master : ""), messages);
  }
#endif
#ifdef RINGLAB_HAVE_MPI
  if (backend == "mpi") {
    auto group = std::make_unique<MpiProcessGroup>(timeout);
    if ((rank >= 0 && rank != group->rank()) || (size >= 0 && size != group->size()))
      throw Error({group->rank(), "mpi.init", -1},
                  "expected rank " + std::to_string(rank) + " of " + std::to_string(size) +
                      " but mpirun started rank " + std::to_string(group->rank()) + " of " +
                      std::to_string(group->size()));
    return group;
  }
#endif
  if (backend == "nccl") {
    if (!store) throw Error({rank, "nccl.init", -1}, "the NCCL backend needs a store for its unique id");
    const BackendInfo info = nccl_backend_info(size);
    if (!info.available) throw InputError("backend 'nccl' cannot run here: " + info.reason);
    return gpu_backend()->make_nccl_group(*store, rank, size, timeout);
  }
  throw InputError("backend '" + backend + "' has no process group in this build (available: " +
                   available_names() + ")");
}

}  // namespace ringlab

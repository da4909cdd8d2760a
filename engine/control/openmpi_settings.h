#pragma once
// The OpenMPI settings (MCA variables, OMPI_MCA_*) that ringlab's mpirun gives its ranks unless
// the caller's environment sets them: which shared-memory copy to use, how many ranks a host
// takes, and which warnings are noise in a container.
#include <map>
#include <string>

#include "engine/control/launcher.h"

namespace ringlab {

// Whether one process may read another's memory with process_vm_readv ("cross memory attach",
// CMA), which OpenMPI's shared-memory transport (vader) uses to copy a large message once,
// straight from the sender's buffer. Containers often forbid it (seccomp, Yama's ptrace_scope,
// user namespaces), and vader then warns and falls back, or, asked for CMA by name, stops the
// job. Found out once per process by trying it on a forked child: 0.3 ms from a small process,
// 13 ms from one holding 200 MB (fork copies its page tables), before mpirun's own start-up.
bool cross_memory_attach_works();

// The defaults, by variable name. On one host: CMA where cross_memory_attach_works(), with
// messages up to 32 KiB still sent eagerly (a DDP bucket of the seed's model is 11 KB: its
// chunks would otherwise each wait for a rendezvous and a process_vm_readv), and copies through
// shared memory otherwise (or where the caller chose another mechanism). Across hosts (only this
// one was tried) always the copies.
std::map<std::string, std::string> openmpi_defaults(const Placement& placement);

// What the ranks will see: these defaults, the caller's own values where set, and every other
// OMPI_MCA_* variable of the caller's environment (mpirun passes them all on).
std::map<std::string, std::string> openmpi_settings(const Placement& placement);

}  // namespace ringlab

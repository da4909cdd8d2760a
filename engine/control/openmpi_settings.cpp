#include "engine/control/openmpi_settings.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>

namespace ringlab {
namespace {

// A value the child holds at a known address: fork() gives it the parent's address space.
volatile uint64_t cma_probe_marker = 0;

void close_both(int fds[2]) {
  ::close(fds[0]);
  ::close(fds[1]);
}

// The child says it is ready, then waits until the parent closes its end (or dies). It runs
// only async-signal-safe calls: the caller may have threads.
[[noreturn]] void cma_probe_child(int ready[2], int hold[2]) {
  ::close(ready[0]);
  ::close(hold[1]);  // else the child's own copy would keep its read below from ever ending
  // As vader does under Yama's ptrace_scope 1: let any process of this user read this one.
  ::prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  char c = 1;
  (void)!::write(ready[1], &c, 1);
  (void)!::read(hold[0], &c, 1);
  ::_exit(0);
}

bool read_marker_from(pid_t child, int ready_read) {
  pollfd p{ready_read, POLLIN, 0};
  char c = 0;
  if (::poll(&p, 1, 2000) != 1 || ::read(ready_read, &c, 1) != 1) return false;
  uint64_t got = 0;
  iovec local{&got, sizeof got};
  iovec remote{const_cast<uint64_t*>(&cma_probe_marker), sizeof got};
  return ::process_vm_readv(child, &local, 1, &remote, 1, 0) == sizeof got && got == cma_probe_marker;
}

bool probe_cross_memory_attach() {
  int ready[2], hold[2];
  if (::pipe2(ready, O_CLOEXEC) != 0) return false;
  if (::pipe2(hold, O_CLOEXEC) != 0) {
    close_both(ready);
    return false;
  }
  cma_probe_marker = 0x52696e674c616221ull;  // the parent's value, which the child inherits
  const pid_t child = ::fork();
  if (child == 0) cma_probe_child(ready, hold);
  ::close(ready[1]);
  ::close(hold[0]);
  const bool works = child > 0 && read_marker_from(child, ready[0]);
  ::close(hold[1]);  // the child's read returns: it exits
  ::close(ready[0]);
  if (child > 0) {
    ::kill(child, SIGKILL);  // whatever it is doing: the wait below must not hang
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {}
  }
  return works;
}

}  // namespace

bool cross_memory_attach_works() {
  static const bool works = probe_cross_memory_attach();
  return works;
}

std::map<std::string, std::string> openmpi_defaults(const Placement& placement) {
  std::map<std::string, std::string> d = {
      {"OMPI_MCA_btl_base_warn_component_unused", "0"},  // no complaint about unused InfiniBand
      {"OMPI_MCA_btl_vader_single_copy_mechanism", "none"},
  };
  if (placement.spans_hosts()) return d;  // mpirun reaches the other hosts through its remote agent
  d["OMPI_MCA_plm"] = "isolated";         // this machine alone: no ssh
  d["OMPI_MCA_rmaps_base_oversubscribe"] = "1";  // more ranks than cores
  // The eager limit goes with CMA, whoever chose it: it was measured with CMA only.
  const char* own = std::getenv("OMPI_MCA_btl_vader_single_copy_mechanism");
  if (own ? std::string(own) == "cma" : cross_memory_attach_works()) {
    d["OMPI_MCA_btl_vader_single_copy_mechanism"] = "cma";
    d["OMPI_MCA_btl_vader_eager_limit"] = "32768";
  }
  return d;
}

std::map<std::string, std::string> openmpi_settings(const Placement& placement) {
  std::map<std::string, std::string> s = openmpi_defaults(placement);
  for (const auto& [name, value] : parent_environment())  // mpirun hands every one on to the ranks
    if (name.starts_with("OMPI_MCA_")) s[name] = value;
  return s;
}

}  // namespace ringlab

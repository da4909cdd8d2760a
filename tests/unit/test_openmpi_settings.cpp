// The OpenMPI settings ringlab's mpirun gives its ranks: the single copy (CMA) where this machine
// allows one process to read another's memory, the copies through shared memory where it does
// not or across hosts, and the caller's own values kept.
#include <doctest/doctest.h>

#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>

#include "engine/control/openmpi_settings.h"

using namespace ringlab;

namespace {

constexpr const char* kMechanism = "OMPI_MCA_btl_vader_single_copy_mechanism";

// The same question asked the other way round: a child reads its parent's memory. Where that
// works (no seccomp filter, no Yama restriction), the probe's parent reading a child must too.
bool child_reads_parent() {
  static int value = 1234;
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child == 0) {
    int got = 0;
    iovec local{&got, sizeof got}, remote{&value, sizeof value};
    ::_exit(::process_vm_readv(parent, &local, 1, &remote, 1, 0) == sizeof got && got == 1234 ? 0 : 1);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

struct UnsetMechanism {
  UnsetMechanism() { ::unsetenv(kMechanism); }
  ~UnsetMechanism() { ::unsetenv(kMechanism); }
};

}  // namespace

TEST_CASE("the CMA probe answers, agrees with a direct attempt, and leaves no child behind") {
  const bool works = cross_memory_attach_works();
  CHECK(cross_memory_attach_works() == works);  // asked once per process
  if (child_reads_parent()) CHECK(works);
  errno = 0;
  CHECK(::waitpid(-1, nullptr, WNOHANG) == -1);
  CHECK(errno == ECHILD);
}

TEST_CASE("on one host: CMA with a 32 KiB eager limit where the probe allows it, else the copies") {
  UnsetMechanism clean;
  const auto d = openmpi_defaults(Placement{});
  CHECK(d.at("OMPI_MCA_plm") == "isolated");
  CHECK(d.at("OMPI_MCA_rmaps_base_oversubscribe") == "1");
  CHECK(d.at("OMPI_MCA_btl_base_warn_component_unused") == "0");
  if (cross_memory_attach_works()) {
    CHECK(d.at(kMechanism) == "cma");
    CHECK(d.at("OMPI_MCA_btl_vader_eager_limit") == "32768");
  } else {
    CHECK(d.at(kMechanism) == "none");
    CHECK(d.count("OMPI_MCA_btl_vader_eager_limit") == 0);
  }
}

TEST_CASE("across hosts: the copies, and mpirun's own agent and slots") {
  UnsetMechanism clean;
  Placement across;
  across.hosts = {LaunchHost{"node-a", 2}, LaunchHost{"node-b", 2}};
  const auto d = openmpi_defaults(across);
  CHECK(d.at(kMechanism) == "none");
  CHECK(d.count("OMPI_MCA_btl_vader_eager_limit") == 0);
  CHECK(d.count("OMPI_MCA_plm") == 0);
  CHECK(d.count("OMPI_MCA_rmaps_base_oversubscribe") == 0);
}

TEST_CASE("the caller's own mechanism is kept, and the eager limit follows it") {
  UnsetMechanism clean;
  ::setenv(kMechanism, "none", 1);
  auto s = openmpi_settings(Placement{});
  CHECK(s.at(kMechanism) == "none");
  CHECK(s.count("OMPI_MCA_btl_vader_eager_limit") == 0);
  ::setenv(kMechanism, "cma", 1);
  s = openmpi_settings(Placement{});
  CHECK(s.at(kMechanism) == "cma");
  CHECK(s.at("OMPI_MCA_btl_vader_eager_limit") == "32768");
  ::setenv("OMPI_MCA_btl_vader_eager_limit", "8192", 1);
  CHECK(openmpi_settings(Placement{}).at("OMPI_MCA_btl_vader_eager_limit") == "8192");
  ::unsetenv("OMPI_MCA_btl_vader_eager_limit");
  // Any other of the caller's OpenMPI settings reaches the ranks too, and the report says so.
  ::setenv("OMPI_MCA_mpi_yield_when_idle", "1", 1);
  CHECK(openmpi_settings(Placement{}).at("OMPI_MCA_mpi_yield_when_idle") == "1");
  CHECK(openmpi_defaults(Placement{}).count("OMPI_MCA_mpi_yield_when_idle") == 0);
  ::unsetenv("OMPI_MCA_mpi_yield_when_idle");
}

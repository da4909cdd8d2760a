// Where a run's ranks go beyond this machine: `--hosts` and `--hostfile` as mpirun takes them,
// the checks that refuse a placement that cannot run (with the flags named), and the ranks per
// node the views draw.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

#include "engine/control/launcher.h"
#include "engine/core/error.h"

using namespace ringlab;

namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string write_temp(const std::string& text) {
  char path[] = "/tmp/ringlab-hostfile-XXXXXX";
  const int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  REQUIRE(::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  ::close(fd);
  return path;
}

JobConfig mpi_job(int world_size) {
  JobConfig job;
  job.backend = "mpi";
  job.world_size = world_size;
  return job;
}

}  // namespace

TEST_CASE("--hosts is host:slots, comma-separated, a bare host one slot") {
  const auto hosts = parse_hosts("h1:2,10.0.0.7,h3:3");
  REQUIRE(hosts.size() == 3);
  CHECK(hosts[0].name == "h1");
  CHECK(hosts[0].slots == 2);
  CHECK(hosts[1].name == "10.0.0.7");
  CHECK(hosts[1].slots == 1);
  CHECK(total_slots(hosts) == 6);
  CHECK(error_of([] { parse_hosts("h1:2,"); }).find("the host name is empty") != std::string::npos);
  CHECK(error_of([] { parse_hosts("h1:0"); }).find("slots must be in 1..64, got 0") != std::string::npos);
  CHECK(error_of([] { parse_hosts("h1:two"); }).find("slots 'two' is not a whole number") != std::string::npos);
  CHECK(error_of([] { parse_hosts("h1:40,h2:40"); }).find("80 slots in all, more than the 64") != std::string::npos);
  CHECK(error_of([] { parse_hosts("fe80::1"); }).find("IPv6 addresses are not supported") != std::string::npos);
}

TEST_CASE("a hostfile gives every host's slots") {
  const std::string path = write_temp("# the lab\nnodeA slots=2 max_slots=4  # first\n\nnodeB slots=3\n");
  const auto hosts = read_hostfile(path);
  REQUIRE(hosts.size() == 2);
  CHECK(hosts[1].name == "nodeB");
  CHECK(hosts[1].slots == 3);
  const Placement p = placement_from_flags("", path, "auto");
  CHECK(p.hostfile == path);
  CHECK(total_slots(p.hosts) == 5);
  std::remove(path.c_str());

  const std::string no_slots = write_temp("nodeA slots=2\nnodeB\n");
  CHECK(error_of([&] { read_hostfile(no_slots); }).find("line 2: 'nodeB' has no slots=N") != std::string::npos);
  std::remove(no_slots.c_str());
  const std::string odd = write_temp("nodeA cpus=2\n");
  CHECK(error_of([&] { read_hostfile(odd); }).find("line 1: 'cpus=2' is not slots=N") != std::string::npos);
  std::remove(odd.c_str());
}

TEST_CASE("a placement that cannot run is refused, naming the flags") {
  const Placement two_hosts = placement_from_flags("h1:2,h2:2", "", "auto");
  CHECK(error_of([&] { check_placement(two_hosts, mpi_job(3), "10.0.0.1", 1); })
            .find("--world-size 3 but --hosts h1:2,h2:2 has 4 slots: give -n 4") != std::string::npos);
  JobConfig gloo = mpi_job(4);
  gloo.backend = "gloo";
  CHECK(error_of([&] { check_placement(two_hosts, gloo, "10.0.0.1", 1); }).find("not gloo") != std::string::npos);
  CHECK(error_of([&] { check_placement(two_hosts, mpi_job(4), "127.0.0.1", 1); })
            .find("--master-addr 127.0.0.1 is a loopback address, which the ranks on h1 cannot reach") !=
        std::string::npos);
  CHECK(error_of([&] { check_placement(two_hosts, mpi_job(4), "0.0.0.0", 1); })
            .find("connect to themselves") != std::string::npos);
  CHECK(error_of([&] { check_placement(two_hosts, mpi_job(4), "10.0.0.1", 2); }).find("leave --nnodes out") !=
        std::string::npos);
  CHECK(error_of([&] { check_placement(two_hosts, mpi_job(4), "10.0.0.1", 1); }) == "(no error)");
  // Hosts that are all this machine may use loopback.
  const Placement here = placement_from_flags("127.0.0.1:2,localhost:2", "", "auto");
  CHECK(error_of([&] { check_placement(here, mpi_job(4), "127.0.0.1", 1); }) == "(no error)");

  CHECK(error_of([] { placement_from_flags("h1:2", "f", "auto"); }).find("give one of them") != std::string::npos);
  CHECK(error_of([] { placement_from_flags("", "", "slurm"); }).find("--launcher must be auto") != std::string::npos);
  const Placement srun = placement_from_flags("", "", "srun");
  const char* job_id = std::getenv("SLURM_JOB_ID");
  const std::string saved = job_id ? job_id : "";
  ::unsetenv("SLURM_JOB_ID");
  CHECK(error_of([&] { check_placement(srun, JobConfig{}, "127.0.0.1", 1); }).find("SLURM_JOB_ID is not set") !=
        std::string::npos);
  ::setenv("SLURM_JOB_ID", "42", 1);
  CHECK(error_of([&] { check_placement(srun, mpi_job(2), "127.0.0.1", 1); }).find("--launcher srun with --backend mpi") !=
        std::string::npos);
  if (saved.empty()) ::unsetenv("SLURM_JOB_ID");
  else ::setenv("SLURM_JOB_ID", saved.c_str(), 1);
}

TEST_CASE("ranks per node: the hosts' slots in order, nothing for one node or a mismatch") {
  CHECK(planned_ranks_per_node(placement_from_flags("h1:2,h2:3", "", "auto"), 5) == std::vector<int>{2, 3});
  CHECK(planned_ranks_per_node(placement_from_flags("h1:2,h2:3", "", "auto"), 4).empty());
  CHECK(planned_ranks_per_node(placement_from_flags("h1:4", "", "auto"), 4).empty());
  CHECK(planned_ranks_per_node(Placement{}, 4).empty());
}

TEST_CASE("this machine: loopback, its host name, its interfaces; other names are not") {
  CHECK(is_this_machine("localhost"));
  CHECK(is_this_machine("127.0.0.2"));
  CHECK(is_this_machine("::1"));
  char name[256] = {};
  REQUIRE(::gethostname(name, sizeof name - 1) == 0);
  CHECK(is_this_machine(name));
  CHECK_FALSE(is_this_machine("203.0.113.7"));  // TEST-NET-3: documentation only, never local
  CHECK_FALSE(is_this_machine("no-such-host-of-ringlab"));
}

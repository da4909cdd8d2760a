// How a worker finds its place: torchrun's variables, OpenMPI's, Slurm's, ringlab's own, and a clear
// message for every value that is missing, not a number, or inconsistent with another.
#include <doctest/doctest.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/error.h"
#include "engine/rank/worker_env.h"

using namespace ringlab;

namespace {

using Vars = std::map<std::string, std::string>;

const char* const kVariables[] = {
    "RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
    "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
    "OMPI_COMM_WORLD_LOCAL_SIZE", "RINGLAB_EVENT_ADDR", "RINGLAB_RUN_ID", "RINGLAB_TOKEN", "GROUP_RANK",
    "SLURM_STEP_ID", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NODEID", "SLURM_STEP_TASKS_PER_NODE",
    "SLURM_TASKS_PER_NODE", "SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST"};

// Clears every variable the reader looks at, sets the given ones, and puts the process's
// environment back as it was when the test ends.
class ScopedEnv {
 public:
  explicit ScopedEnv(const std::map<std::string, std::string>& set) {
    for (const char* name : kVariables) {
      const char* value = std::getenv(name);
      saved_[name] = value ? std::optional<std::string>(value) : std::nullopt;
      ::unsetenv(name);
    }
    for (const auto& [name, value] : set) ::setenv(name.c_str(), value.c_str(), 1);
  }
  ~ScopedEnv() {
    for (const auto& [name, value] : saved_) {
      if (value) ::setenv(name.c_str(), value->c_str(), 1);
      else ::unsetenv(name.c_str());
    }
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

// The message read_worker_env() throws for these variables; fails the test if it does not throw.
std::string error_for(const std::map<std::string, std::string>& vars) {
  ScopedEnv env(vars);
  try {
    WorkerEnv got = read_worker_env();
    FAIL("expected an InputError, got " << got.describe());
  } catch (const InputError& e) {
    return e.what();
  }
  return {};
}

}  // namespace

TEST_CASE("a worker started by hand with nothing set is one process alone") {
  ScopedEnv env({});
  WorkerEnv w = read_worker_env();
  CHECK(w.rank == 0);
  CHECK(w.world_size == 1);
  CHECK(w.local_rank == 0);
  CHECK(w.local_world_size == 1);
  CHECK(w.master_addr == "127.0.0.1");
  CHECK(w.master_port == 29500);
  CHECK(w.event_addr.empty());
  CHECK(w.event_port == 0);
  CHECK(w.run_id.empty());
  CHECK(w.token.empty());
  CHECK_FALSE(w.from_mpi);
  CHECK(w.describe() == "rank 0 of 1 (local 0 of 1), master 127.0.0.1:29500");
}

TEST_CASE("torchrun's variables and ringlab's own are read") {
  ScopedEnv env({{"RANK", "5"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "4"},
                 {"MASTER_ADDR", "10.1.2.3"}, {"MASTER_PORT", "31337"},
                 {"RINGLAB_EVENT_ADDR", "127.0.0.1:29611"}, {"RINGLAB_RUN_ID", "run-42"},
                 {"RINGLAB_TOKEN", "s3cret"}});
  WorkerEnv w = read_worker_env();
  CHECK(w.rank == 5);
  CHECK(w.world_size == 8);
  CHECK(w.local_rank == 1);
  CHECK(w.local_world_size == 4);
  CHECK(w.master_addr == "10.1.2.3");
  CHECK(w.master_port == 31337);
  CHECK(w.event_addr == "127.0.0.1");
  CHECK(w.event_port == 29611);
  CHECK(w.run_id == "run-42");
  CHECK(w.token == "s3cret");
  CHECK_FALSE(w.from_mpi);
}

TEST_CASE("without LOCAL_* every rank is on this node; with LOCAL_WORLD_SIZE alone torchrun's layout") {
  SUBCASE("RANK and WORLD_SIZE only") {
    ScopedEnv env({{"RANK", "2"}, {"WORLD_SIZE", "3"}});
    WorkerEnv w = read_worker_env();
    CHECK(w.local_rank == 2);
    CHECK(w.local_world_size == 3);
  }
  SUBCASE("LOCAL_WORLD_SIZE given: local rank = rank mod local size") {
    ScopedEnv env({{"RANK", "6"}, {"WORLD_SIZE", "8"}, {"LOCAL_WORLD_SIZE", "4"}});
    WorkerEnv w = read_worker_env();
    CHECK(w.local_rank == 2);
    CHECK(w.local_world_size == 4);
  }
  SUBCASE("LOCAL_RANK given: every rank on this node") {
    ScopedEnv env({{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "1"}});
    WorkerEnv w = read_worker_env();
    CHECK(w.local_rank == 1);
    CHECK(w.local_world_size == 2);
  }
}

TEST_CASE("OpenMPI's variables win over torchrun's for rank and sizes") {
  ScopedEnv env({{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "4"},
                 {"OMPI_COMM_WORLD_LOCAL_RANK", "3"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"},
                 {"RANK", "0"}, {"WORLD_SIZE", "1"}, {"LOCAL_RANK", "0"}, {"LOCAL_WORLD_SIZE", "1"},
                 {"MASTER_PORT", "29501"}});
  WorkerEnv w = read_worker_env();
  CHECK(w.from_mpi);
  CHECK(w.rank == 3);
  CHECK(w.world_size == 4);
  CHECK(w.local_rank == 3);
  CHECK(w.local_world_size == 4);
  CHECK(w.master_port == 29501);
  CHECK(w.describe() == "rank 3 of 4 (local 3 of 4), master 127.0.0.1:29501, started by mpirun");
}

TEST_CASE("the event server's address may be IPv6; empty means no event server") {
  SUBCASE("[::1]:7000") {
    ScopedEnv env(Vars{{"RINGLAB_EVENT_ADDR", "[::1]:7000"}});
    WorkerEnv w = read_worker_env();
    CHECK(w.event_addr == "::1");
    CHECK(w.event_port == 7000);
  }
  SUBCASE("empty") {
    ScopedEnv env(Vars{{"RINGLAB_EVENT_ADDR", ""}});
    WorkerEnv w = read_worker_env();
    CHECK(w.event_addr.empty());
    CHECK(w.event_port == 0);
  }
}

TEST_CASE("parse_worker_env reads the same from a map") {
  WorkerEnv w = parse_worker_env({{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "4000"}});
  CHECK(w.rank == 1);
  CHECK(w.world_size == 2);
  CHECK(w.master_port == 4000);
  CHECK_THROWS_AS(parse_worker_env({{"RANK", "2"}, {"WORLD_SIZE", "2"}}), InputError);
}

TEST_CASE("rank and world size: inconsistent values are named with their value") {
  CHECK(error_for({{"RANK", "5"}, {"WORLD_SIZE", "4"}}).find(
            "RANK=5 but WORLD_SIZE=4: RANK must be below WORLD_SIZE") != std::string::npos);
  CHECK(error_for({{"RANK", "4"}, {"WORLD_SIZE", "4"}}).find("RANK must be below WORLD_SIZE") != std::string::npos);
  CHECK(error_for({{"RANK", "-1"}, {"WORLD_SIZE", "4"}}).find("RANK=-1: must be at least 0") != std::string::npos);
  CHECK(error_for({{"RANK", "0"}, {"WORLD_SIZE", "0"}}).find("WORLD_SIZE=0: must be at least 1") != std::string::npos);
  CHECK(error_for({{"RANK", "1"}}).find("RANK=1 is set but WORLD_SIZE is not") != std::string::npos);
  CHECK(error_for({{"WORLD_SIZE", "2"}}).find("WORLD_SIZE=2 is set but RANK is not") != std::string::npos);
}

TEST_CASE("values that are not whole numbers are rejected, naming the variable") {
  CHECK(error_for({{"RANK", "one"}, {"WORLD_SIZE", "2"}}).find("RANK='one' is not a whole number") != std::string::npos);
  CHECK(error_for({{"RANK", ""}, {"WORLD_SIZE", "2"}}).find("RANK='' is not a whole number") != std::string::npos);
  CHECK(error_for({{"RANK", "1 "}, {"WORLD_SIZE", "2"}}).find("RANK='1 ' is not a whole number") != std::string::npos);
  CHECK(error_for({{"RANK", "0"}, {"WORLD_SIZE", "2.5"}}).find("WORLD_SIZE='2.5' is not a whole number") != std::string::npos);
  CHECK(error_for({{"RANK", "0"}, {"WORLD_SIZE", "99999999999999999999"}})
            .find("WORLD_SIZE='99999999999999999999' is not a whole number") != std::string::npos);
  CHECK(error_for({{"LOCAL_RANK", "x"}}).find("LOCAL_RANK='x' is not a whole number") != std::string::npos);
}

TEST_CASE("local rank and local world size: inconsistent values are named with their value") {
  const std::map<std::string, std::string> base = {{"RANK", "3"}, {"WORLD_SIZE", "4"}};
  auto with = [&](std::map<std::string, std::string> extra) {
    extra.insert(base.begin(), base.end());
    return error_for(extra);
  };
  CHECK(with({{"LOCAL_RANK", "2"}, {"LOCAL_WORLD_SIZE", "2"}})
            .find("LOCAL_RANK=2 but LOCAL_WORLD_SIZE=2: LOCAL_RANK must be below LOCAL_WORLD_SIZE") != std::string::npos);
  CHECK(with({{"LOCAL_RANK", "-1"}}).find("LOCAL_RANK=-1: must be at least 0") != std::string::npos);
  CHECK(with({{"LOCAL_WORLD_SIZE", "0"}}).find("LOCAL_WORLD_SIZE=0: must be at least 1") != std::string::npos);
  CHECK(with({{"LOCAL_WORLD_SIZE", "8"}})
            .find("LOCAL_WORLD_SIZE=8 but WORLD_SIZE=4: LOCAL_WORLD_SIZE must not exceed WORLD_SIZE") != std::string::npos);
  CHECK(error_for({{"RANK", "1"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "2"}})
            .find("LOCAL_RANK=2 but RANK=1: LOCAL_RANK cannot exceed RANK") != std::string::npos);
  // Alone, LOCAL_RANK must fit the single process's node.
  CHECK(error_for({{"LOCAL_RANK", "1"}})
            .find("LOCAL_RANK=1 but WORLD_SIZE=1: LOCAL_RANK must be below WORLD_SIZE") != std::string::npos);
}

TEST_CASE("OpenMPI's values are checked and named as OpenMPI's") {
  CHECK(error_for({{"OMPI_COMM_WORLD_RANK", "2"}, {"OMPI_COMM_WORLD_SIZE", "2"}})
            .find("OMPI_COMM_WORLD_RANK=2 but OMPI_COMM_WORLD_SIZE=2: OMPI_COMM_WORLD_RANK must be below "
                  "OMPI_COMM_WORLD_SIZE") != std::string::npos);
  CHECK(error_for({{"OMPI_COMM_WORLD_RANK", "0"}})
            .find("OMPI_COMM_WORLD_RANK=0 is set but OMPI_COMM_WORLD_SIZE is not") != std::string::npos);
  CHECK(error_for({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"},
                   {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "1"}})
            .find("OMPI_COMM_WORLD_LOCAL_RANK=1 but OMPI_COMM_WORLD_LOCAL_SIZE=1") != std::string::npos);
}

TEST_CASE("the store's and the event server's addresses are checked") {
  CHECK(error_for({{"MASTER_PORT", "0"}}).find("MASTER_PORT=0: the port must be a number in 1..65535") != std::string::npos);
  CHECK(error_for({{"MASTER_PORT", "65536"}}).find("MASTER_PORT=65536: the port must be") != std::string::npos);
  CHECK(error_for({{"MASTER_PORT", "http"}}).find("MASTER_PORT=http: the port must be") != std::string::npos);
  CHECK(error_for({{"MASTER_ADDR", ""}}).find("MASTER_ADDR is set but empty") != std::string::npos);
  CHECK(error_for({{"RINGLAB_EVENT_ADDR", "localhost"}})
            .find("RINGLAB_EVENT_ADDR=localhost: expected host:port") != std::string::npos);
  CHECK(error_for({{"RINGLAB_EVENT_ADDR", ":7000"}}).find("RINGLAB_EVENT_ADDR=:7000: expected host:port") != std::string::npos);
  CHECK(error_for({{"RINGLAB_EVENT_ADDR", "[]:7000"}}).find("RINGLAB_EVENT_ADDR=[]:7000: the host is empty") != std::string::npos);
  CHECK(error_for({{"RINGLAB_EVENT_ADDR", "127.0.0.1:"}})
            .find("RINGLAB_EVENT_ADDR=127.0.0.1:: the port must be a number in 1..65535") != std::string::npos);
  CHECK(error_for({{"RINGLAB_EVENT_ADDR", "127.0.0.1:99999"}})
            .find("RINGLAB_EVENT_ADDR=127.0.0.1:99999: the port must be") != std::string::npos);
}

TEST_CASE("a task srun started takes its place from Slurm's variables") {
  ScopedEnv env({{"SLURM_STEP_ID", "0"}, {"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "7"}, {"SLURM_LOCALID", "1"},
                 {"SLURM_NODEID", "1"}, {"SLURM_STEP_TASKS_PER_NODE", "4,3"},
                 {"SLURM_STEP_NODELIST", "node[07-09,12],gpu5"}, {"SLURM_JOB_NODELIST", "node[01-12]"}});
  WorkerEnv w = read_worker_env();
  CHECK(w.from_slurm);
  CHECK_FALSE(w.from_mpi);
  CHECK(w.rank == 5);
  CHECK(w.world_size == 7);
  CHECK(w.local_rank == 1);
  CHECK(w.local_world_size == 3);
  CHECK(w.group_rank == 1);
  CHECK(w.master_addr == "node07");  // rank 0 runs on the step's first node, and hosts the store
  CHECK(w.master_port == 29500);
  CHECK(w.describe() == "rank 5 of 7 (local 1 of 3), master node07:29500, started by srun");
}

TEST_CASE("Slurm's variables are a fallback: torchrun's and MASTER_ADDR win, a batch script is no rank") {
  SUBCASE("RANK set (torchrun started by srun)") {
    ScopedEnv env({{"SLURM_STEP_ID", "0"}, {"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}, {"RANK", "3"},
                   {"WORLD_SIZE", "8"}, {"GROUP_RANK", "1"}, {"LOCAL_WORLD_SIZE", "4"}});
    WorkerEnv w = read_worker_env();
    CHECK_FALSE(w.from_slurm);
    CHECK(w.rank == 3);
    CHECK(w.world_size == 8);
    CHECK(w.group_rank == 1);
    CHECK(w.master_addr == "127.0.0.1");
  }
  SUBCASE("MASTER_ADDR set") {
    ScopedEnv env({{"SLURM_STEP_ID", "3"}, {"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"},
                   {"SLURM_JOB_NODELIST", "a[1-2]"}, {"MASTER_ADDR", "10.0.0.9"}, {"MASTER_PORT", "4000"}});
    WorkerEnv w = read_worker_env();
    CHECK(w.from_slurm);
    CHECK(w.master_addr == "10.0.0.9");
    CHECK(w.master_port == 4000);
    CHECK(w.local_world_size == 2);  // no tasks-per-node: every rank on this node
  }
  SUBCASE("only the job's node list") {
    ScopedEnv env({{"SLURM_STEP_ID", "3"}, {"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"SLURM_JOB_NODELIST", "vm"}});
    CHECK(read_worker_env().master_addr == "vm");
  }
  SUBCASE("a batch script: SLURM_PROCID without a step") {
    ScopedEnv env({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "4"}, {"SLURM_JOB_NODELIST", "vm"}});
    WorkerEnv w = read_worker_env();
    CHECK_FALSE(w.from_slurm);
    CHECK(w.world_size == 1);
    CHECK(w.master_addr == "127.0.0.1");
  }
}

TEST_CASE("Slurm's values are checked and named as Slurm's") {
  CHECK(error_for({{"SLURM_STEP_ID", "0"}, {"SLURM_PROCID", "2"}, {"SLURM_NTASKS", "2"}, {"SLURM_JOB_NODELIST", "vm"}})
            .find("SLURM_PROCID=2 but SLURM_NTASKS=2: SLURM_PROCID must be below SLURM_NTASKS") != std::string::npos);
  CHECK(error_for({{"SLURM_STEP_ID", "0"}, {"SLURM_PROCID", "0"}, {"SLURM_JOB_NODELIST", "vm"}})
            .find("SLURM_PROCID=0 is set but SLURM_NTASKS is not") != std::string::npos);
  CHECK(error_for({{"SLURM_STEP_ID", "0"}, {"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}})
            .find("neither MASTER_ADDR nor SLURM_STEP_NODELIST nor SLURM_JOB_NODELIST is set") != std::string::npos);
  CHECK(error_for({{"SLURM_STEP_ID", "0"}, {"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"},
                   {"SLURM_JOB_NODELIST", "node[01-03"}})
            .find("SLURM_JOB_NODELIST=node[01-03: '[' without ']'") != std::string::npos);
  CHECK(error_for({{"SLURM_STEP_ID", "0"}, {"SLURM_PROCID", "3"}, {"SLURM_NTASKS", "4"}, {"SLURM_NODEID", "2"},
                   {"SLURM_STEP_TASKS_PER_NODE", "2(x2)"}, {"SLURM_JOB_NODELIST", "vm"}})
            .find("SLURM_NODEID=2 but SLURM_STEP_TASKS_PER_NODE=2(x2) lists 2 node(s)") != std::string::npos);
  CHECK(error_for({{"SLURM_STEP_ID", "0"}, {"SLURM_PROCID", "3"}, {"SLURM_NTASKS", "4"}, {"SLURM_LOCALID", "2"},
                   {"SLURM_STEP_TASKS_PER_NODE", "2(x2)"}, {"SLURM_NODEID", "1"}, {"SLURM_JOB_NODELIST", "vm"}})
            .find("SLURM_LOCALID=2 but SLURM_STEP_TASKS_PER_NODE=2(x2): SLURM_LOCALID must be below "
                  "SLURM_STEP_TASKS_PER_NODE") != std::string::npos);
}

TEST_CASE("Slurm's hostlists and tasks per node") {
  CHECK(first_slurm_host("node[01-03],gpu5", "x") == "node01");
  CHECK(first_slurm_host("node[7,9-12]", "x") == "node7");
  CHECK(first_slurm_host("rack[2-3]-n[001-004]", "x") == "rack2-n001");
  CHECK(first_slurm_host("vm", "x") == "vm");
  CHECK(first_slurm_host("gpu5,node[01-03]", "x") == "gpu5");
  CHECK_THROWS_AS(first_slurm_host("", "x"), InputError);
  CHECK_THROWS_AS(first_slurm_host("node[a-b]", "x"), InputError);
  CHECK_THROWS_AS(first_slurm_host("node]1", "x"), InputError);
  CHECK(parse_slurm_tasks_per_node("2(x3),1", "x") == std::vector<int>{2, 2, 2, 1});
  CHECK(parse_slurm_tasks_per_node("4", "x") == std::vector<int>{4});
  for (const char* bad : {"", "0", "2(x0)", "2(3)", "2(x3", "x", "2,,1", "1(x99999999999)"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_slurm_tasks_per_node(bad, "SLURM_TASKS_PER_NODE"), InputError);
  }
}

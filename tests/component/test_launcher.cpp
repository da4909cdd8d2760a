// The launcher with real processes: `/bin/sh -c` children stand in for workers, write what
// they saw to files, fail, hang, ignore SIGTERM, and must all be gone when wait() returns.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "engine/core/error.h"
#include "engine/control/launcher.h"
#include "engine/net/ports.h"

using namespace ringlab;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "ringlab-launcher-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const fs::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  std::string text = s.str();
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

// n ranks of `/bin/sh -c script`, with $DIR pointing at the test's folder.
LaunchSpec shell_spec(int n, const std::string& script, const TempDir& dir) {
  LaunchSpec spec;
  spec.world_size = n;
  spec.local_world_size = n;
  spec.executable = "/bin/sh";
  spec.worker_args = {"-c", script};
  spec.env = {{"DIR", dir.path().string()}};
  spec.master_port = 29999;
  return spec;
}

// A process is gone once it no longer exists, or is only a zombie waiting for a parent that is
// not us (the ranks' own children are reaped by init, or by nobody in some containers).
bool gone(pid_t pid) {
  if (::kill(pid, 0) != 0) return errno == ESRCH;
  std::string stat = read_text("/proc/" + std::to_string(pid) + "/stat");
  size_t close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'Z';
}

bool reaped(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

bool gone_within(pid_t pid, std::chrono::seconds bound) {
  const auto until = std::chrono::steady_clock::now() + bound;
  while (!gone(pid) && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  return gone(pid);
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

bool have_mpirun() { return std::system("command -v mpirun >/dev/null 2>&1") == 0; }

}  // namespace

TEST_CASE("every rank gets torchrun's environment and all exit 0") {
  TempDir dir;
  LaunchSpec spec = shell_spec(3, R"(echo "$RANK $LOCAL_RANK $WORLD_SIZE $LOCAL_WORLD_SIZE $GROUP_RANK )"
                                   R"($MASTER_ADDR $MASTER_PORT $RUN_NOTE" > "$DIR/rank$RANK")", dir);
  spec.nnodes = 2;
  spec.node_rank = 1;
  spec.world_size = 6;  // this node holds ranks 3, 4, 5
  spec.env["RUN_NOTE"] = "hello";
  Launcher launcher(spec);
  launcher.start();
  REQUIRE(launcher.pids().size() == 3);
  auto exits = launcher.wait(60s);
  REQUIRE(exits.size() == 3);
  for (int i = 0; i < 3; ++i) {
    CHECK(exits[i].ok());
    CHECK(exits[i].rank == 3 + i);
    CHECK(exits[i].describe() == "exit code 0");
    CHECK(reaped(exits[i].pid));
  }
  CHECK(read_text(dir.file("rank3")) == "3 0 6 3 1 127.0.0.1 29999 hello");
  CHECK(read_text(dir.file("rank4")) == "4 1 6 3 1 127.0.0.1 29999 hello");
  CHECK(read_text(dir.file("rank5")) == "5 2 6 3 1 127.0.0.1 29999 hello");
  CHECK_FALSE(launcher.running());
}

TEST_CASE("inherited placement variables are replaced, stdin is empty, port 0 is resolved") {
  TempDir dir;
  ::setenv("OMPI_COMM_WORLD_RANK", "7", 1);
  LaunchSpec spec = shell_spec(1, R"(echo "${OMPI_COMM_WORLD_RANK:-unset} $MASTER_PORT" > "$DIR/env"; )"
                                   R"(cat > "$DIR/stdin")", dir);
  spec.master_port = 0;
  Launcher launcher(spec);
  launcher.start();
  ::unsetenv("OMPI_COMM_WORLD_RANK");
  uint16_t port = launcher.spec().master_port;
  CHECK(port != 0);
  auto exits = launcher.wait(60s);
  REQUIRE(exits.size() == 1);
  CHECK(exits[0].ok());
  CHECK(read_text(dir.file("env")) == "unset " + std::to_string(port));
  CHECK(read_text(dir.file("stdin")).empty());
}

TEST_CASE("one failing rank tears the others down, and is reported first") {
  TempDir dir;
  // Each rank also starts a child of its own: it must go too (it is in the rank's process group).
  LaunchSpec spec = shell_spec(4, R"(sleep 30 & echo $! > "$DIR/child$RANK"; )"
                                  R"(if [ "$RANK" = 2 ]; then exit 3; fi; wait)", dir);
  Launcher launcher(spec);
  launcher.start();
  for (int r = 0; r < 4; ++r) {  // every rank has started its child before we judge
    while (read_text(dir.file("child" + std::to_string(r))).empty()) std::this_thread::sleep_for(1ms);
  }
  auto begin = std::chrono::steady_clock::now();
  auto exits = launcher.wait(300s);
  CHECK(seconds_since(begin) < 60);  // a hang guard, not a speed test: the others were stopped, not waited out
  REQUIRE(exits.size() == 4);
  CHECK(exits[0].rank == 2);
  CHECK(exits[0].exited);
  CHECK(exits[0].exit_code == 3);
  CHECK_FALSE(exits[0].terminated);
  CHECK(exits[0].describe() == "exit code 3");
  int others[] = {0, 1, 3};
  for (int i = 1; i < 4; ++i) {
    CHECK(exits[i].rank == others[i - 1]);
    CHECK_FALSE(exits[i].ok());
    CHECK(exits[i].terminated);
    CHECK_FALSE(exits[i].timed_out);
    CHECK((exits[i].signal == SIGTERM || exits[i].signal == SIGKILL));
    CHECK(exits[i].describe().find("(stopped by the launcher)") != std::string::npos);
  }
  for (const auto& e : exits) CHECK(reaped(e.pid));
  // The signal has been sent to each rank's group; a loaded machine may take a moment to run
  // the children's exit (seconds, not 30: the bound only catches one that was never signalled).
  for (int r = 0; r < 4; ++r) {
    pid_t child = static_cast<pid_t>(std::stol(read_text(dir.file("child" + std::to_string(r)))));
    CHECK(gone_within(child, 20s));
  }
}

TEST_CASE("a rank killed by a signal is described by the signal's name") {
  TempDir dir;
  Launcher launcher(shell_spec(1, "kill -KILL $$", dir));
  launcher.start();
  auto exits = launcher.wait(60s);
  REQUIRE(exits.size() == 1);
  CHECK_FALSE(exits[0].exited);
  CHECK(exits[0].signal == SIGKILL);
  CHECK_FALSE(exits[0].ok());
  CHECK_FALSE(exits[0].terminated);
  CHECK(exits[0].describe() == "killed by SIGKILL");
  CHECK(signal_name(SIGTERM) == "SIGTERM");
  CHECK(signal_name(SIGSEGV) == "SIGSEGV");
}

TEST_CASE("ranks found ended together: the one killed by a signal is the root cause, not a lower rank's error exit") {
  TempDir dir;
  // Rank 0 exits with an error the moment rank 1 is gone (a zombie: the launcher has not looked
  // yet), as a peer whose connection closed does; wait() is called only once both have ended,
  // so one pass of the launcher finds both.
  LaunchSpec spec = shell_spec(2, R"(if [ "$RANK" = 1 ]; then echo $$ > "$DIR/pid1"; kill -KILL $$; fi; )"
                                  R"(while [ ! -s "$DIR/pid1" ]; do sleep 0.01; done; )"
                                  R"sh(while [ "$(cut -d' ' -f3 /proc/$(cat "$DIR/pid1")/stat)" != Z ]; do sleep 0.01; done; exit 1)sh",
                       dir);
  Launcher launcher(spec);
  launcher.start();
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  for (pid_t pid : launcher.pids())  // both zombies, unseen by the launcher so far
    while (!gone(pid) && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(5ms);
  auto exits = launcher.wait(60s);
  REQUIRE(exits.size() == 2);
  CHECK(exits[0].rank == 1);
  CHECK(exits[0].signal == SIGKILL);
  CHECK(exits[1].rank == 0);
  CHECK(exits[1].exit_code == 1);
}

TEST_CASE("a timeout terminates everything and is marked as such") {
  TempDir dir;
  Launcher launcher(shell_spec(2, "sleep 30", dir));
  launcher.start();
  auto pids = launcher.pids();
  auto exits = launcher.wait(200ms);
  REQUIRE(exits.size() == 2);
  for (const auto& e : exits) {
    CHECK(e.timed_out);
    CHECK(e.terminated);
    CHECK_FALSE(e.ok());
    CHECK(e.describe().find("(timed out)") != std::string::npos);
  }
  for (pid_t pid : pids) CHECK(reaped(pid));
  CHECK_FALSE(launcher.running());
}

TEST_CASE("a rank that ignores SIGTERM is killed with SIGKILL after the grace period") {
  TempDir dir;
  // `trap '' TERM` makes SIGTERM ignored in the shell and in the sleep it starts.
  LaunchSpec spec = shell_spec(2, R"(trap '' TERM; touch "$DIR/ready$RANK"; )"
                                  R"(if [ "$RANK" = 1 ]; then exit 3; fi; sleep 30)", dir);
  Launcher launcher(spec);
  launcher.start();
  while (!fs::exists(dir.file("ready0"))) std::this_thread::sleep_for(1ms);
  auto begin = std::chrono::steady_clock::now();
  auto exits = launcher.wait(60s, {}, 300ms);
  double waited = seconds_since(begin);
  REQUIRE(exits.size() == 2);
  CHECK(exits[0].rank == 1);
  CHECK(exits[0].exit_code == 3);
  CHECK(exits[1].rank == 0);
  CHECK(exits[1].signal == SIGKILL);
  CHECK(exits[1].describe() == "killed by SIGKILL (stopped by the launcher)");
  CHECK(waited >= 0.3);  // SIGTERM was given its grace period first
  CHECK(reaped(exits[1].pid));
}

TEST_CASE("should_stop ends the run without marking a timeout") {
  TempDir dir;
  Launcher launcher(shell_spec(2, "sleep 30", dir));
  launcher.start();
  int calls = 0;
  auto exits = launcher.wait(60s, [&] { return ++calls >= 3; });
  CHECK(calls == 3);
  REQUIRE(exits.size() == 2);
  for (const auto& e : exits) {
    CHECK(e.terminated);
    CHECK_FALSE(e.timed_out);
    CHECK(e.signal == SIGTERM);
    CHECK(reaped(e.pid));
  }
}

TEST_CASE("terminate_all from another thread ends a wait in progress") {
  TempDir dir;
  Launcher launcher(shell_spec(3, "sleep 30", dir));
  launcher.start();
  std::atomic<bool> waiting{false};
  std::thread stopper([&] {
    while (!waiting) std::this_thread::sleep_for(1ms);
    launcher.terminate_all(500ms);
  });
  waiting = true;
  auto exits = launcher.wait(60s);
  stopper.join();
  REQUIRE(exits.size() == 3);
  for (const auto& e : exits) {
    CHECK(e.terminated);
    CHECK(reaped(e.pid));
  }
}

TEST_CASE("the destructor terminates and reaps what is still running") {
  TempDir dir;
  std::vector<pid_t> pids;
  {
    Launcher launcher(shell_spec(2, "sleep 30", dir));
    launcher.start();
    pids = launcher.pids();
    CHECK(launcher.running());
  }
  REQUIRE(pids.size() == 2);
  for (pid_t pid : pids) CHECK(reaped(pid));
}

TEST_CASE("start() reports what cannot be started") {
  TempDir dir;
  SUBCASE("a missing executable") {
    LaunchSpec spec = shell_spec(2, "true", dir);
    spec.executable = dir.file("no-such-worker");
    Launcher launcher(spec);
    try {
      launcher.start();
      FAIL("start() should have thrown");
    } catch (const Error& e) {
      std::string what = e.what();
      CHECK(what.find("cannot start " + spec.executable) != std::string::npos);
      CHECK(what.find("No such file or directory") != std::string::npos);
    }
    CHECK_FALSE(launcher.running());
  }
  SUBCASE("an inconsistent layout") {
    LaunchSpec spec = shell_spec(2, "true", dir);
    spec.node_rank = 1;  // nnodes is 1
    Launcher launcher(spec);
    CHECK_THROWS_WITH_AS(launcher.start(), doctest::Contains("node_rank=1 but nnodes=1"), InputError);
  }
  SUBCASE("a world too small for this node") {
    LaunchSpec spec = shell_spec(4, "true", dir);
    spec.world_size = 3;
    Launcher launcher(spec);
    CHECK_THROWS_WITH_AS(launcher.start(), doctest::Contains("world_size=3 is too small"), InputError);
  }
  SUBCASE("started twice") {
    Launcher launcher(shell_spec(1, "true", dir));
    launcher.start();
    CHECK_THROWS_AS(launcher.start(), Error);
    CHECK(launcher.wait(60s).at(0).ok());
  }
}

namespace {

bool binds_on_loopback(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

TEST_CASE("pick_free_port returns a port that can be bound") {
  uint16_t port = pick_free_port("127.0.0.1");
  CHECK(port > 0);
  CHECK(binds_on_loopback(port));
  CHECK_THROWS_AS(pick_free_port("no-such-host.invalid"), InputError);
  CHECK_THROWS_AS(pick_free_port(""), InputError);
}

// A script's MASTER_PORT is bound seconds after it is chosen: below the ephemeral range, no
// outgoing connection on the machine takes it meanwhile.
TEST_CASE("a port for a child is free and below the kernel's ephemeral range") {
  int low = 0, high = 0;
  std::ifstream("/proc/sys/net/ipv4/ip_local_port_range") >> low >> high;
  REQUIRE(low > 2048);
  for (int i = 0; i < 5; ++i) {
    const uint16_t port = pick_port_for_a_child("127.0.0.1");
    CAPTURE(port);
    CHECK(port >= low / 2);
    CHECK(port < low);
    CHECK(binds_on_loopback(port));
  }
  CHECK_THROWS_AS(pick_port_for_a_child(""), InputError);
}

TEST_CASE("mpirun starts the ranks as one process") {
  if (!have_mpirun()) {
    std::printf("SKIP: mpirun is not on PATH; the mpirun launch is not tested\n");
    return;
  }
  TempDir dir;
  SUBCASE("two ranks see OpenMPI's placement and the forwarded variables") {
    LaunchSpec spec = shell_spec(2, R"(echo "$OMPI_COMM_WORLD_RANK $OMPI_COMM_WORLD_SIZE $MASTER_PORT $RUN_NOTE" )"
                                    R"(> "$DIR/mpi$OMPI_COMM_WORLD_RANK")", dir);
    spec.use_mpirun = true;
    spec.env["RUN_NOTE"] = "via-x";
    Launcher launcher(spec);
    launcher.start();
    auto exits = launcher.wait(120s);
    REQUIRE(exits.size() == 1);
    CHECK(exits[0].rank == -1);
    CHECK(exits[0].ok());
    CHECK(read_text(dir.file("mpi0")) == "0 2 29999 via-x");
    CHECK(read_text(dir.file("mpi1")) == "1 2 29999 via-x");
  }
  SUBCASE("stopping mpirun stops its ranks") {
    LaunchSpec spec = shell_spec(2, R"(echo $$ > "$DIR/pid$OMPI_COMM_WORLD_RANK.tmp"; )"
                                    R"(mv "$DIR/pid$OMPI_COMM_WORLD_RANK.tmp" "$DIR/pid$OMPI_COMM_WORLD_RANK"; )"
                                    R"(exec sleep 30)", dir);
    spec.use_mpirun = true;
    Launcher launcher(spec);
    launcher.start();
    auto both_started = [&] { return fs::exists(dir.file("pid0")) && fs::exists(dir.file("pid1")); };
    auto exits = launcher.wait(120s, both_started, 3000ms);
    REQUIRE(exits.size() == 1);
    CHECK(exits[0].terminated);
    CHECK(reaped(exits[0].pid));
    for (const char* name : {"pid0", "pid1"}) {
      pid_t rank_pid = static_cast<pid_t>(std::stol(read_text(dir.file(name))));
      CHECK(gone_within(rank_pid, 20s));
    }
  }
}

TEST_CASE("no rank outlives a controller that is killed") {
  TempDir dir;
  std::string pid_file = dir.file("pids");
  pid_t controller = ::fork();
  REQUIRE(controller >= 0);
  if (controller == 0) {
    // A stand-in controller: starts two ranks, says who they are, then dies by SIGKILL, so
    // no destructor or handler of its own can clean up. The kernel's parent-death signal
    // reaches the ranks themselves, not children a rank started (hence `exec`).
    Launcher launcher(shell_spec(2, "exec sleep 30", dir));
    launcher.start();
    {
      std::ofstream out(pid_file + ".tmp");
      for (pid_t pid : launcher.pids()) out << pid << "\n";
    }
    std::rename((pid_file + ".tmp").c_str(), pid_file.c_str());
    ::raise(SIGKILL);
  }
  int status = 0;
  REQUIRE(::waitpid(controller, &status, 0) == controller);
  REQUIRE(WIFSIGNALED(status));
  std::ifstream in(pid_file);
  std::vector<pid_t> ranks;
  for (pid_t pid; in >> pid;) ranks.push_back(pid);
  REQUIRE(ranks.size() == 2);
  for (pid_t pid : ranks) {
    CHECK(gone_within(pid, 20s));
  }
}

TEST_CASE("listening on a wildcard address names every interface it exposes; a single address warns of nothing") {
  CHECK(wildcard_listen_addresses("127.0.0.1").empty());
  CHECK(wildcard_listen_addresses("localhost").empty());
  CHECK(exposure_warning("127.0.0.1").empty());
  const std::vector<std::string> v4 = wildcard_listen_addresses("0.0.0.0");
  CHECK(std::find(v4.begin(), v4.end(), "127.0.0.1 (lo)") != v4.end());
  for (const std::string& a : v4) CHECK(a.find(':') == std::string::npos);  // IPv4 only
  const std::string warning = exposure_warning("0.0.0.0");
  CHECK(warning.find("--master-addr 0.0.0.0 listens on every interface") != std::string::npos);
  CHECK(warning.find("127.0.0.1 (lo)") != std::string::npos);
  CHECK(warning.find("the run's token is the only thing that keeps others out") != std::string::npos);
  // ::, which takes IPv4 connections too, names the IPv4 addresses as well.
  const std::vector<std::string> any = wildcard_listen_addresses("::");
  CHECK(std::find(any.begin(), any.end(), "127.0.0.1 (lo)") != any.end());
}

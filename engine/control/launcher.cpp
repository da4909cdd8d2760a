#include "engine/control/launcher.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <climits>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <future>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <sstream>
#include <thread>

#include <fmt/core.h>
#include <fmt/format.h>

#include "engine/control/openmpi_settings.h"
#include "engine/control/output_relay.h"
#include "engine/core/clock.h"
#include "engine/core/error.h"
#include "engine/core/thread_name.h"
#include "engine/core/input_file.h"
#include "engine/core/limits.h"
#include "engine/net/endpoint.h"
#include "engine/net/ports.h"
#include "engine/rank/worker_env.h"

extern char** environ;

namespace ringlab {

std::map<std::string, std::string> parent_environment() {
  std::map<std::string, std::string> env;
  for (char** entry = environ; entry && *entry; ++entry) {
    const char* eq = std::strchr(*entry, '=');
    if (eq) env[std::string(*entry, static_cast<size_t>(eq - *entry))] = eq + 1;
  }
  return env;
}

namespace {

// Whether a process is stopped (SIGSTOP, Ctrl-Z, a debugger's stop): the state letter after its
// name in /proc/PID/stat, T or t. A stopped rank answers nothing, and a SIGTERM waits for it to
// be continued: its end is then the launcher's SIGKILL.
bool process_is_stopped(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  std::getline(in, stat);
  const size_t name_end = stat.rfind(')');  // the name may hold spaces and parentheses
  return name_end != std::string::npos && name_end + 2 < stat.size() &&
         (stat[name_end + 2] == 'T' || stat[name_end + 2] == 't');
}

using Clock = std::chrono::steady_clock;
using EnvMap = std::map<std::string, std::string>;

constexpr auto kPollInterval = std::chrono::milliseconds(5);
// How often wait() looks at the running workers and asks its caller whether to stop. Each look
// wakes the controller, and where the ranks fill every core (2 ranks of a 16 MiB MPI all-reduce
// spinning on 2 cores) each wake-up takes a core from a rank for a moment: at 5 ms the bench's
// controller woke ~700 times a second. A rank that died is still seen within this long.
constexpr auto kWaitInterval = std::chrono::milliseconds(50);
// After SIGKILL a process normally dies at once; one stuck in the kernel (D state) is given
// this long before we stop waiting for it rather than hang the controller.
constexpr auto kKillWait = std::chrono::seconds(5);
// How long start() waits to hear whether a child's execve succeeded.
constexpr int kExecReportTimeoutMs = 10000;

ErrorContext start_context(int rank) { return ErrorContext{rank, "launcher.start", -1}; }

// ---- What to run -------------------------------------------------------------------------

// The workers run this very program. When its file was replaced while it runs (a rebuild, an
// upgrade), the path names a deleted file: a forked worker then execs "/proc/self/exe", which is
// still the running program's own file, so controller and workers stay the same version. mpirun
// and srun cannot (in their children that link is their own), so they are told the path, and
// the error says it is gone. `starter`: the program that starts the workers, null when forked.
std::string self_executable(const char* starter) {
  char path[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) throw Error(start_context(-1), std::string("readlink /proc/self/exe: ") + std::strerror(errno));
  const std::string self(path, static_cast<size_t>(n));
  const std::string deleted = " (deleted)";
  const bool gone = self.size() > deleted.size() && self.compare(self.size() - deleted.size(), deleted.size(), deleted) == 0;
  if (gone && !starter) return "/proc/self/exe";
  if (gone)
    throw Error(start_context(-1), fmt::format("this program's file {} was replaced while it runs; {} cannot start "
                                               "the old one: start ringlab again",
                                               self.substr(0, self.size() - deleted.size()), starter));
  return self;
}

bool is_executable(const std::string& path) { return !path.empty() && ::access(path.c_str(), X_OK) == 0; }

std::string find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t begin = 0;
  while (begin <= dirs.size()) {
    size_t end = dirs.find(':', begin);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(begin, end - begin);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (is_executable(candidate)) return candidate;
    begin = end + 1;
  }
  return {};
}

// The mpirun that matches the MPI library ringlab was built with, else the first on PATH.
std::string find_mpirun() {
#ifdef RINGLAB_MPIEXEC
  if (is_executable(RINGLAB_MPIEXEC)) return RINGLAB_MPIEXEC;
#endif
  std::string found = find_on_path("mpirun");
  if (found.empty()) found = find_on_path("mpiexec");
  if (found.empty()) throw Error(start_context(-1), "the MPI backend needs mpirun, but none is on PATH");
  return found;
}

std::string find_srun() {
  std::string found = find_on_path("srun");
  if (found.empty()) throw Error(start_context(-1), "--launcher srun needs Slurm's srun, but none is on PATH");
  return found;
}

const char* starter_of(const LaunchSpec& spec) {
  if (spec.placement.srun) return "srun";
  return spec.use_mpirun ? "mpirun" : nullptr;
}

// ---- The environment of each process ------------------------------------------------------

// Variables a worker reads to find its place (see worker_env.h). Inherited copies are dropped
// so that a controller which itself runs under torchrun or mpirun does not confuse its workers.
void drop_inherited_placement(EnvMap& env) {
  for (const char* key : {"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK",
                          "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                          "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"}) {
    env.erase(key);
  }
}

// torchrun's variables: the global rank counts the ranks of the nodes before this one.
EnvMap rank_environment(const LaunchSpec& spec, int local_rank) {
  EnvMap env = parent_environment();
  drop_inherited_placement(env);
  env["RANK"] = std::to_string(spec.node_rank * spec.local_world_size + local_rank);
  env["LOCAL_RANK"] = std::to_string(local_rank);
  env["WORLD_SIZE"] = std::to_string(spec.world_size);
  env["LOCAL_WORLD_SIZE"] = std::to_string(spec.local_world_size);
  env["GROUP_RANK"] = std::to_string(spec.node_rank);
  env["MASTER_ADDR"] = spec.master_addr;
  env["MASTER_PORT"] = std::to_string(spec.master_port);
  for (const auto& [key, value] : spec.env) env[key] = value;
  return env;
}

// What mpirun and srun hand on to every rank: the store's address and spec.env, which they
// pass by name (see mpirun_argv), from their own environment.
EnvMap starter_environment(const LaunchSpec& spec) {
  EnvMap env = parent_environment();
  drop_inherited_placement(env);
  env["MASTER_ADDR"] = spec.master_addr;
  env["MASTER_PORT"] = std::to_string(spec.master_port);
  for (const auto& [key, value] : spec.env) env[key] = value;
  return env;
}

// mpirun hands each rank OMPI_COMM_WORLD_RANK and friends itself; it only forwards the
// variables named with -x, plus every OMPI_* one, which is how the settings below reach ranks.
EnvMap mpirun_environment(const LaunchSpec& spec) {
  EnvMap env = starter_environment(spec);
  // ringlab's defaults where the user set none (engine/control/openmpi_settings.h).
  for (const auto& [name, value] : openmpi_settings(spec.placement)) env[name] = value;
  if (::geteuid() == 0) {
    env["OMPI_ALLOW_RUN_AS_ROOT"] = "1";
    env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1";
  }
  return env;
}

std::string hosts_argument(const std::vector<LaunchHost>& hosts) {
  std::vector<std::string> items;
  for (const LaunchHost& h : hosts) items.push_back(fmt::format("{}:{}", h.name, h.slots));
  return fmt::format("{}", fmt::join(items, ","));
}

// One host: every rank here, as many as asked (--oversubscribe). Across hosts: the hosts with
// their slots (-H or --hostfile), filled in order (--map-by slot: ranks 0..s1-1 on the first host,
// and so on), which is the order JobConfig::ranks_per_node describes.
std::vector<std::string> mpirun_argv(const LaunchSpec& spec, const std::string& mpirun) {
  const Placement& p = spec.placement;
  std::vector<std::string> argv = {mpirun, "--allow-run-as-root"};
  if (!p.hostfile.empty()) argv.insert(argv.end(), {"--hostfile", p.hostfile, "--map-by", "slot"});
  else if (p.spans_hosts()) argv.insert(argv.end(), {"-H", hosts_argument(p.hosts), "--map-by", "slot"});
  else argv.push_back("--oversubscribe");
  argv.insert(argv.end(), {"-np", std::to_string(spec.local_world_size), "--bind-to", "none",
                           "-x", "MASTER_ADDR", "-x", "MASTER_PORT"});
  for (const auto& [key, value] : spec.env) {
    argv.push_back("-x");
    argv.push_back(key);  // the name only: values (the run's token) stay out of `ps`
  }
  argv.push_back(spec.executable);
  argv.insert(argv.end(), spec.worker_args.begin(), spec.worker_args.end());
  return argv;
}

// srun gives each task SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_NODEID (see
// worker_env.h) and exports its own environment to the tasks (--export=ALL, said even though it
// is srun's default, against a SLURM_EXPORT_ENV=NONE in the user's environment), so the values
// travel in the environment and never on the command line. --kill-on-bad-exit: a rank that fails
// ends the others, as the launcher does for forked workers.
std::vector<std::string> srun_argv(const LaunchSpec& spec, const std::string& srun) {
  std::vector<std::string> argv = {srun, "--ntasks=" + std::to_string(spec.world_size), "--kill-on-bad-exit=1",
                                   "--export=ALL", spec.executable};
  argv.insert(argv.end(), spec.worker_args.begin(), spec.worker_args.end());
  return argv;
}

// execve wants NULL-terminated arrays of char*; they must be built before fork, because the
// child of a multi-threaded process may only call async-signal-safe functions (no malloc).
class CStringArray {
 public:
  explicit CStringArray(std::vector<std::string> strings) : strings_(std::move(strings)) {
    for (auto& s : strings_) pointers_.push_back(s.data());
    pointers_.push_back(nullptr);
  }
  static CStringArray from_env(const EnvMap& env) {
    std::vector<std::string> entries;
    for (const auto& [key, value] : env) entries.push_back(key + "=" + value);
    return CStringArray(std::move(entries));
  }
  char* const* get() const { return const_cast<char* const*>(pointers_.data()); }

 private:
  std::vector<std::string> strings_;
  std::vector<char*> pointers_;
};

// ---- Starting one process -----------------------------------------------------------------

struct ChildSetup {
  const char* path;
  char* const* argv;
  char* const* envp;
  pid_t parent;
  int death_signal;  // sent to the child by the kernel when the forking thread dies
  int stdin_fd;      // /dev/null: workers never read the terminal
  int stdout_fd;     // -1: this process's own; else the output relay's pipe
  int stderr_fd;
  int exec_report_fd;
};

// Runs in the child between fork and exec: async-signal-safe calls only.
[[noreturn]] void become_child(const ChildSetup& s) {
  // Its own process group, so that one kill(-pid, ...) reaches the rank's own children too.
  ::setpgid(0, 0);
  // If the controller dies (even by SIGKILL) the kernel kills this process: no orphans. The
  // parent may already have died before this line, so check once by hand.
  ::prctl(PR_SET_PDEATHSIG, s.death_signal);
  if (::getppid() != s.parent) ::_exit(127);
  // Undo what the controller may have set for itself: blocked or ignored signals survive exec.
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD}) ::signal(sig, SIG_DFL);
  ::dup2(s.stdin_fd, STDIN_FILENO);
  if (s.stdout_fd >= 0) ::dup2(s.stdout_fd, STDOUT_FILENO);
  if (s.stderr_fd >= 0) ::dup2(s.stderr_fd, STDERR_FILENO);
  // Sockets and files of the controller (the store's listening socket) stay with it.
  if (s.exec_report_fd > 3) ::close_range(3, static_cast<unsigned>(s.exec_report_fd) - 1, 0);
  ::close_range(static_cast<unsigned>(s.exec_report_fd) + 1, ~0U, 0);
  ::execve(s.path, s.argv, s.envp);
  int error = errno;
  ssize_t ignored = ::write(s.exec_report_fd, &error, sizeof(error));
  (void)ignored;
  ::_exit(127);
}

// Waits until the child's execve succeeded (the close-on-exec pipe reads EOF) or reported
// errno; returns 0 on success, -1 when the child never got as far as either.
int read_exec_report(int fd) {
  pollfd p{fd, POLLIN, 0};
  int ready = 0;
  do ready = ::poll(&p, 1, kExecReportTimeoutMs);
  while (ready < 0 && errno == EINTR);
  if (ready == 0) return -1;
  int error = 0;
  ssize_t n = 0;
  do n = ::read(fd, &error, sizeof(error));
  while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(sizeof(error)) ? error : 0;
}

// `output`: the relay's pipe ends for the child's stdout and stderr (closed here once it is
// started), or -1 each for this process's own.
pid_t spawn(int rank, const std::string& path, const std::vector<std::string>& argv, const EnvMap& env,
            int death_signal, OutputRelay::ChildEnds output = {}) {
  struct CloseEnds {
    OutputRelay::ChildEnds& ends;
    ~CloseEnds() {
      for (int fd : {ends.out, ends.err})
        if (fd >= 0) ::close(fd);
    }
  } close_ends{output};
  CStringArray args(argv), envp = CStringArray::from_env(env);
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) {
    if (errno == EMFILE || errno == ENFILE)
      throw LimitError(start_context(rank), fmt::format("pipe: out of file descriptors ({}); {}", std::strerror(errno),
                                                        nofile_limit_text()));
    throw Error(start_context(rank), std::string("pipe: ") + std::strerror(errno));
  }
  int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ChildSetup setup{path.c_str(), args.get(), envp.get(), ::getpid(), death_signal, devnull, output.out, output.err,
                   report[1]};
  pid_t pid = ::fork();
  if (pid == 0) become_child(setup);
  int fork_error = errno;
  ::close(report[1]);
  if (devnull >= 0) ::close(devnull);
  if (pid < 0) {
    ::close(report[0]);
    const std::string why = std::string("fork: ") + std::strerror(fork_error);
    if (fork_error == EAGAIN) throw LimitError(start_context(rank), why + "; " + nproc_limit_text());
    throw Error(start_context(rank), why);
  }
  ::setpgid(pid, pid);  // also here, so the group exists before we might signal it
  int exec_error = read_exec_report(report[0]);
  ::close(report[0]);
  if (exec_error != 0) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    std::string why = exec_error < 0 ? "no execve within " + std::to_string(kExecReportTimeoutMs / 1000) + " s"
                                     : std::strerror(exec_error);
    throw Error(start_context(rank), "cannot start " + path + ": " + why);
  }
  return pid;
}

void validate(const LaunchSpec& spec) {
  ErrorContext ctx = start_context(-1);
  auto fail = [&](const std::string& what) { throw InputError(ctx, what); };
  if (spec.nnodes < 1) fail("nnodes=" + std::to_string(spec.nnodes) + ": must be at least 1");
  if (spec.node_rank < 0 || spec.node_rank >= spec.nnodes) {
    fail("node_rank=" + std::to_string(spec.node_rank) + " but nnodes=" + std::to_string(spec.nnodes) +
         ": node_rank must be in [0, nnodes)");
  }
  if (spec.local_world_size < 1) fail("local_world_size=" + std::to_string(spec.local_world_size) + ": must be at least 1");
  int last_rank = (spec.node_rank + 1) * spec.local_world_size - 1;
  if (last_rank >= spec.world_size) {
    fail("world_size=" + std::to_string(spec.world_size) + " is too small for node_rank=" +
         std::to_string(spec.node_rank) + " with local_world_size=" + std::to_string(spec.local_world_size));
  }
  if (spec.use_mpirun && (spec.nnodes != 1 || spec.world_size != spec.local_world_size)) {
    fail("one mpirun starts every rank of the run, on this host or on placement.hosts: nnodes must be 1 and "
         "world_size equal to local_world_size");
  }
  const Placement& p = spec.placement;
  if (p.spans_hosts() && !spec.use_mpirun) fail("placement.hosts are for mpirun, but use_mpirun is false");
  if (p.spans_hosts() && total_slots(p.hosts) != spec.world_size) {
    fail(fmt::format("world_size={} but the hosts {} have {} slots", spec.world_size, hosts_argument(p.hosts),
                     total_slots(p.hosts)));
  }
  if (p.srun && (spec.use_mpirun || p.spans_hosts() || spec.nnodes != 1)) {
    fail("srun starts every rank of the run itself: not with mpirun, hosts or several nodes");
  }
  if (spec.master_addr.empty()) fail("master_addr is empty");
}

}  // namespace

// ---- RankExit -----------------------------------------------------------------------------

// ---- Launcher -----------------------------------------------------------------------------

struct Launcher::Impl {
  struct Process {
    pid_t pid = -1;
    bool exited = false;  // its exit status is known (it may still be a zombie)
    bool reaped = false;  // waited for: the pid is free for reuse, never signal it again
    RankExit exit;
  };

  LaunchSpec spec;
  mutable std::mutex mutex;
  std::vector<Process> processes;  // in rank order
  std::vector<size_t> exit_order;  // indices into processes, in the order their exits were seen
  bool started = false;
  std::unique_ptr<OutputRelay> relay;  // spec.relay_output: the ranks' stdout and stderr

  // Linux sends PR_SET_PDEATHSIG when the *thread* that forked exits, not the process. So the
  // forks happen on a thread that lives as long as this Launcher: a controller may call start()
  // from a short-lived thread without its workers being killed when that thread ends.
  std::thread spawner;
  std::mutex spawner_mutex;
  std::condition_variable spawner_cv;
  bool spawner_quit = false;

  void spawn_all();
  bool poll(Process& p, bool reap_if_ok);
  void poll_all(bool reap_if_ok);
  void reap(Process& p);
  void signal_group(const Process& p, int sig);
  bool all_exited() const;
  using Lock = std::unique_lock<std::mutex>;
  // Called with `lock` held; it is released while sleeping, so running() and pids() from
  // another thread (a UI) never wait for a grace period.
  void terminate(Lock& lock, std::chrono::milliseconds grace, bool timed_out);
  void poll_until_all_exited(Lock& lock, Clock::time_point deadline, std::chrono::milliseconds interval);
  std::vector<RankExit> ordered_exits() const;
};

void Launcher::Impl::spawn_all() {
  try {
    if (spec.use_mpirun || spec.placement.srun) {
      const std::string starter = spec.use_mpirun ? find_mpirun() : find_srun();
      std::vector<std::string> argv = spec.use_mpirun ? mpirun_argv(spec, starter) : srun_argv(spec, starter);
      EnvMap env = spec.use_mpirun ? mpirun_environment(spec) : starter_environment(spec);
      // mpirun and srun get SIGTERM rather than SIGKILL when the controller dies: they then stop
      // their ranks (srun hands the signal on to every task).
      pid_t pid = spawn(-1, starter, argv, env, SIGTERM);
      RankExit exit{-1, pid};
      exit.program = starter_of(spec);
      std::lock_guard lock(mutex);
      processes.push_back(Process{pid, false, false, exit});
      return;
    }
    for (int local = 0; local < spec.local_world_size; ++local) {
      int rank = spec.node_rank * spec.local_world_size + local;
      std::vector<std::string> argv = {spec.executable};
      argv.insert(argv.end(), spec.worker_args.begin(), spec.worker_args.end());
      const OutputRelay::ChildEnds output = relay ? relay->add(rank) : OutputRelay::ChildEnds{};
      pid_t pid = spawn(rank, spec.executable, argv, rank_environment(spec, local), SIGKILL, output);
      std::lock_guard lock(mutex);
      processes.push_back(Process{pid, false, false, RankExit{rank, pid}});
    }
  } catch (...) {
    Lock lock(mutex);
    terminate(lock, std::chrono::milliseconds(0), false);
    throw;
  }
}

// Learns whether `p` has exited without reaping it (WNOWAIT): while it is an unreaped zombie
// its pid, and so its process group id, cannot be reused, so signalling the group stays safe.
bool Launcher::Impl::poll(Process& p, bool reap_if_ok) {
  if (p.exited) return true;
  siginfo_t info{};
  int rc = ::waitid(P_PID, static_cast<id_t>(p.pid), &info, WEXITED | WNOHANG | WNOWAIT);
  if (rc == 0 && info.si_pid == 0) return false;  // still running
  p.exited = true;
  p.exit.seen_unix_ns = wall_ns();
  p.exit.node = spec.node_rank;
  exit_order.push_back(static_cast<size_t>(&p - processes.data()));
  if (rc != 0) {  // ECHILD: someone else reaped it; the status is lost
    p.reaped = true;
    return true;
  }
  if (info.si_code == CLD_EXITED) {
    p.exit.exited = true;
    p.exit.exit_code = info.si_status;
  } else {
    p.exit.signal = info.si_status;
  }
  if (reap_if_ok && p.exit.ok()) reap(p);
  return true;
}

// Processes found ended in the same pass (5 ms apart at most) are ordered killed-by-a-signal
// first: a rank SIGKILLed (or crashed) cannot be reacting to anybody, while its peers exit with
// an error a moment later because their connection to it closed. Scanned in rank order alone,
// a peer of lower rank would be taken for the root cause.
void Launcher::Impl::poll_all(bool reap_if_ok) {
  const size_t before = exit_order.size();
  for (auto& p : processes) poll(p, reap_if_ok);
  std::stable_partition(exit_order.begin() + static_cast<std::ptrdiff_t>(before), exit_order.end(),
                        [&](size_t i) { return processes[i].exit.signal != 0; });
}

void Launcher::Impl::reap(Process& p) {
  if (p.reaped || !p.exited) return;
  while (::waitpid(p.pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  p.reaped = true;
}

void Launcher::Impl::signal_group(const Process& p, int sig) {
  if (p.reaped) return;
  if (::kill(-p.pid, sig) != 0) ::kill(p.pid, sig);
}

bool Launcher::Impl::all_exited() const {
  return std::all_of(processes.begin(), processes.end(), [](const Process& p) { return p.exited; });
}

// SIGTERM first, like torchrun: a worker may flush its trace and say goodbye to the store.
// What is still alive after `grace` gets SIGKILL, which cannot be caught or ignored. The group
// of a rank that failed on its own is signalled too (it is still an unreaped zombie, so its
// group id is still ours): children it left behind go with it.
void Launcher::Impl::terminate(Lock& lock, std::chrono::milliseconds grace, bool timed_out) {
  for (auto& p : processes) {
    if (p.exited) continue;
    p.exit.terminated = true;
    p.exit.timed_out = timed_out;
    p.exit.was_stopped = process_is_stopped(p.pid);
  }
  for (const auto& p : processes) signal_group(p, SIGTERM);
  poll_until_all_exited(lock, Clock::now() + grace, kPollInterval);
  for (const auto& p : processes) signal_group(p, SIGKILL);
  poll_until_all_exited(lock, Clock::now() + kKillWait, std::chrono::milliseconds(1));
  for (auto& p : processes) reap(p);
}

void Launcher::Impl::poll_until_all_exited(Lock& lock, Clock::time_point deadline,
                                           std::chrono::milliseconds interval) {
  poll_all(false);
  while (!all_exited() && Clock::now() < deadline) {
    lock.unlock();
    std::this_thread::sleep_for(interval);
    lock.lock();
    poll_all(false);
  }
}

// The process that caused the end comes first (the first to fail on its own, else the first
// to time out), then every other process in rank order.
std::vector<RankExit> Launcher::Impl::ordered_exits() const {
  auto root = std::find_if(exit_order.begin(), exit_order.end(), [&](size_t i) {
    const RankExit& e = processes[i].exit;
    return !e.ok() && !e.terminated;
  });
  size_t first = processes.size();
  if (root != exit_order.end()) {
    first = *root;
  } else {
    for (size_t i = 0; i < processes.size() && first == processes.size(); ++i) {
      if (!processes[i].exit.ok()) first = i;
    }
  }
  std::vector<RankExit> out;
  if (first < processes.size()) out.push_back(processes[first].exit);
  for (size_t i = 0; i < processes.size(); ++i) {
    if (i != first) out.push_back(processes[i].exit);
  }
  return out;
}

Launcher::Launcher(LaunchSpec spec) : impl_(new Impl) { impl_->spec = std::move(spec); }

Launcher::~Launcher() {
  terminate_all(std::chrono::milliseconds(1000));
  if (impl_->spawner.joinable()) {
    {
      std::lock_guard lock(impl_->spawner_mutex);
      impl_->spawner_quit = true;
    }
    impl_->spawner_cv.notify_all();
    impl_->spawner.join();
  }
  delete impl_;
}

void Launcher::start() {
  {
    std::lock_guard lock(impl_->mutex);
    if (impl_->started) throw Error(start_context(-1), "the launcher was already started");
    impl_->started = true;
  }
  LaunchSpec& spec = impl_->spec;
  validate(spec);
  if (spec.executable.empty()) spec.executable = self_executable(starter_of(spec));
  if (spec.master_port == 0) spec.master_port = pick_free_port(spec.master_addr);
  if (spec.relay_output && !spec.use_mpirun && !spec.placement.srun)
    impl_->relay = std::make_unique<OutputRelay>(1, 2, spec.local_world_size > 1);  // whose traceback is whose

  std::promise<void> spawned;
  auto result = spawned.get_future();
  impl_->spawner = start_thread("the launcher's spawner", [this, spawned = std::move(spawned)]() mutable {
    name_this_thread("rank spawner");
    try {
      impl_->spawn_all();
      spawned.set_value();
    } catch (...) {
      spawned.set_exception(std::current_exception());
    }
    std::unique_lock lock(impl_->spawner_mutex);
    impl_->spawner_cv.wait(lock, [this] { return impl_->spawner_quit; });
  });
  result.get();  // rethrows the spawner's Error
}

std::vector<RankExit> Launcher::wait(std::chrono::milliseconds timeout, const std::function<bool()>& should_stop,
                                     std::chrono::milliseconds grace) {
  auto deadline = Clock::now() + timeout;
  while (true) {
    {
      Impl::Lock lock(impl_->mutex);
      impl_->poll_all(true);
      bool failed = std::any_of(impl_->processes.begin(), impl_->processes.end(),
                                [](const Impl::Process& p) { return p.exited && !p.exit.ok(); });
      if (failed || impl_->all_exited()) {
        if (failed) impl_->terminate(lock, grace, false);
        return impl_->ordered_exits();
      }
      if (Clock::now() >= deadline) {
        impl_->terminate(lock, grace, true);
        return impl_->ordered_exits();
      }
    }
    if (should_stop && should_stop()) {
      Impl::Lock lock(impl_->mutex);
      impl_->terminate(lock, grace, false);
      return impl_->ordered_exits();
    }
    std::this_thread::sleep_for(std::min<std::chrono::milliseconds>(
        kWaitInterval, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()) +
                           std::chrono::milliseconds(1)));
  }
}

void Launcher::terminate_all(std::chrono::milliseconds grace) {
  Impl::Lock lock(impl_->mutex);
  impl_->poll_all(true);
  bool any_unreaped = std::any_of(impl_->processes.begin(), impl_->processes.end(),
                                  [](const Impl::Process& p) { return !p.reaped; });
  if (any_unreaped) impl_->terminate(lock, grace, false);
}

bool Launcher::drain_output(std::chrono::milliseconds timeout) {
  return !impl_->relay || impl_->relay->drain(timeout);
}

std::vector<std::string> Launcher::stderr_tail(int rank) const {
  return impl_->relay ? impl_->relay->stderr_tail(rank) : std::vector<std::string>{};
}

std::vector<pid_t> Launcher::pids() const {
  std::lock_guard lock(impl_->mutex);
  std::vector<pid_t> out;
  for (const auto& p : impl_->processes) out.push_back(p.pid);
  return out;
}

bool Launcher::signal_process(size_t index, int signal) {
  std::lock_guard lock(impl_->mutex);
  if (index >= impl_->processes.size()) return false;
  Impl::Process& p = impl_->processes[index];
  if (impl_->poll(p, false) || p.reaped) return false;
  return ::kill(p.pid, signal) == 0;
}

bool Launcher::running() const {
  std::lock_guard lock(impl_->mutex);
  impl_->poll_all(true);
  return !impl_->all_exited();
}

const LaunchSpec& Launcher::spec() const { return impl_->spec; }

// ---- Placement: mpirun across hosts, srun in a Slurm allocation ----------------------------

namespace {

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

// Listening on a wildcard reaches every interface, but as an address to connect to it means
// "this machine" to whoever connects: to a rank on another host, its own.
bool is_wildcard(const std::string& host) { return host == "0.0.0.0" || host == "::" || host == "*"; }

std::string hostname_of_this_machine() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return {};
  return lowercase(name);
}

bool is_interface_address(const std::string& host) {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return false;
  bool found = false;
  for (const ifaddrs* a = list; a && !found; a = a->ifa_next) {
    if (!a->ifa_addr) continue;
    char text[INET6_ADDRSTRLEN] = {};
    const int family = a->ifa_addr->sa_family;
    const void* where = nullptr;
    if (family == AF_INET) where = &reinterpret_cast<const sockaddr_in*>(a->ifa_addr)->sin_addr;
    if (family == AF_INET6) where = &reinterpret_cast<const sockaddr_in6*>(a->ifa_addr)->sin6_addr;
    if (where && ::inet_ntop(family, where, text, sizeof text)) found = host == text;
  }
  ::freeifaddrs(list);
  return found;
}

std::optional<std::string> environment_value(const char* name) {
  const char* value = std::getenv(name);
  if (!value) return std::nullopt;
  return std::string(value);
}

int slots_in_range(long long slots, const std::string& what) {
  if (slots < 1 || slots > kMaxWorldSize)
    throw InputError(fmt::format("{}: slots must be in 1..{}, got {}", what, kMaxWorldSize, slots));
  return static_cast<int>(slots);
}

long long parse_slots(const std::string& text, const std::string& what) {
  long long value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end)
    throw InputError(fmt::format("{}: slots '{}' is not a whole number", what, text));
  return value;
}

// A host name or address as mpirun takes it: no separators of its own syntax, no whitespace.
void check_host_name(const std::string& name, const std::string& what) {
  if (name.empty()) throw InputError(fmt::format("{}: the host name is empty", what));
  if (name.find_first_of(" \t:,=#[]") != std::string::npos)
    throw InputError(fmt::format("{}: '{}' is not a host name or IPv4 address (IPv6 addresses are not supported)", what,
                                 name));
}

// The total stays within a run's world size however many hosts there are: an error, not a
// world the job would refuse later under a flag (-n) that was never given.
void check_total(const std::vector<LaunchHost>& hosts, const std::string& what) {
  if (hosts.empty()) throw InputError(fmt::format("{}: no host", what));
  long long total = 0;
  for (const LaunchHost& h : hosts) total += h.slots;
  if (total > kMaxWorldSize)
    throw InputError(fmt::format("{}: {} slots in all, more than the {} ranks a run may have", what, total,
                                 kMaxWorldSize));
}

std::string describe_hosts(const Placement& p) {
  return p.hostfile.empty() ? "--hosts " + hosts_argument(p.hosts) : "--hostfile " + p.hostfile;
}

// The first host (in the flag's order) that is not this machine, or "".
std::string first_remote_host(const Placement& p) {
  for (const LaunchHost& h : p.hosts)
    if (!is_this_machine(h.name)) return h.name;
  return {};
}

void check_reachable_master(const std::string& master_addr, const std::string& others) {
  if (net::is_loopback(master_addr))
    throw InputError(fmt::format("--master-addr {} is a loopback address, which {} cannot reach: give an address of "
                                 "this machine that the other hosts reach (the run's store and event server listen "
                                 "there)", master_addr, others));
  if (is_wildcard(master_addr))
    throw InputError(fmt::format("--master-addr {} would have {} connect to themselves: give an address of this "
                                 "machine that the other hosts reach (the run's store and event server listen there)",
                                 master_addr, others));
}

void check_hosts(const Placement& p, const JobConfig& job, const std::string& master_addr, int nnodes) {
  const std::string hosts = describe_hosts(p);
  if (job.backend != "mpi")
    throw InputError(fmt::format("{} hands the launch to mpirun, which starts --backend mpi ranks, not {}; for {} "
                                 "across machines start one `ringlab run --nnodes N --node-rank R` on each",
                                 hosts, job.backend, job.backend));
  if (nnodes != 1)
    throw InputError(fmt::format("{} and --nnodes {}: with hosts one controller starts every rank through mpirun; "
                                 "leave --nnodes out", hosts, nnodes));
  if (p.srun) throw InputError(fmt::format("--launcher srun and {}: Slurm places the ranks itself; give one", hosts));
  const int slots = total_slots(p.hosts);
  if (job.world_size != slots)
    throw InputError(fmt::format("--world-size {} but {} has {} slots: give -n {}, or leave -n out to use every slot",
                                 job.world_size, hosts, slots, slots));
  if (const std::string remote = first_remote_host(p); !remote.empty())
    check_reachable_master(master_addr, "the ranks on " + remote);
}

void check_srun(const JobConfig& job, const std::string& master_addr, int nnodes) {
  if (!environment_value("SLURM_JOB_ID"))
    throw InputError("--launcher srun starts the ranks inside a Slurm allocation, but SLURM_JOB_ID is not set: run "
                     "ringlab inside salloc or an sbatch script, or leave --launcher out to start the ranks here");
  if (job.backend == "mpi")
    throw InputError("--launcher srun with --backend mpi: OpenMPI's ranks would need srun's PMI set up for them; use "
                     "--backend gloo (or nccl) with srun, or --backend mpi with --hosts");
  if (nnodes != 1)
    throw InputError(fmt::format("--launcher srun and --nnodes {}: one srun starts every rank; leave --nnodes out",
                                 nnodes));
  const std::string nodes =
      environment_value("SLURM_JOB_NUM_NODES").value_or(environment_value("SLURM_NNODES").value_or("1"));
  if (nodes != "1") check_reachable_master(master_addr, fmt::format("the ranks on the allocation's {} nodes", nodes));
}

}  // namespace

std::vector<LaunchHost> parse_hosts(const std::string& text) {
  std::vector<LaunchHost> hosts;
  size_t begin = 0;
  while (true) {
    const size_t end = std::min(text.find(',', begin), text.size());
    const std::string item = text.substr(begin, end - begin);
    const std::string what = fmt::format("--hosts {}: '{}'", text, item);
    const size_t colon = item.rfind(':');
    LaunchHost host;
    host.name = item.substr(0, colon);
    check_host_name(host.name, what);
    if (colon != std::string::npos) host.slots = slots_in_range(parse_slots(item.substr(colon + 1), what), what);
    hosts.push_back(host);
    if (hosts.size() > static_cast<size_t>(kMaxWorldSize)) break;  // check_total says so
    if (end == text.size()) break;
    begin = end + 1;
  }
  check_total(hosts, "--hosts " + text);
  return hosts;
}

std::vector<LaunchHost> read_hostfile(const std::string& path) {
  constexpr uint64_t kMaxHostfileBytes = 1 << 20;
  std::istringstream lines(read_input_file(path, "--hostfile", kMaxHostfileBytes));
  std::vector<LaunchHost> hosts;
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    const std::string what = fmt::format("--hostfile {} line {}", path, number);
    std::istringstream words(line.substr(0, line.find('#')));
    std::string word;
    if (!(words >> word)) continue;  // blank or a comment
    LaunchHost host;
    host.name = word;
    check_host_name(host.name, what);
    bool has_slots = false;
    while (words >> word) {
      const size_t eq = word.find('=');
      const std::string key = word.substr(0, eq), value = eq == std::string::npos ? "" : word.substr(eq + 1);
      if (key == "slots") {
        host.slots = slots_in_range(parse_slots(value, what), what);
        has_slots = true;
      } else if (key != "max_slots" && key != "max-slots") {
        throw InputError(fmt::format("{}: '{}' is not slots=N or max_slots=N", what, word));
      }
    }
    if (!has_slots)
      throw InputError(fmt::format("{}: '{}' has no slots=N; ringlab needs every host's slots to know the world "
                                   "size (OpenMPI would count the host's cores)", what, host.name));
    hosts.push_back(host);
    if (hosts.size() > static_cast<size_t>(kMaxWorldSize)) break;  // check_total says so
  }
  check_total(hosts, "--hostfile " + path);
  return hosts;
}

Placement placement_from_flags(const std::string& hosts, const std::string& hostfile, const std::string& launcher) {
  if (launcher != "auto" && launcher != "srun")
    throw InputError(fmt::format("--launcher must be auto (processes here, or mpirun for --backend mpi) or srun, "
                                 "got '{}'", launcher));
  if (!hosts.empty() && !hostfile.empty())
    throw InputError("--hosts and --hostfile both name the hosts: give one of them");
  Placement p;
  p.srun = launcher == "srun";
  if (!hosts.empty()) p.hosts = parse_hosts(hosts);
  if (!hostfile.empty()) {
    p.hosts = read_hostfile(hostfile);
    p.hostfile = hostfile;
  }
  return p;
}

int total_slots(const std::vector<LaunchHost>& hosts) {
  return std::accumulate(hosts.begin(), hosts.end(), 0, [](int sum, const LaunchHost& h) { return sum + h.slots; });
}

std::vector<int> planned_ranks_per_node(const Placement& placement, int world_size) {
  std::vector<int> counts;
  if (placement.spans_hosts()) {
    for (const LaunchHost& h : placement.hosts) counts.push_back(h.slots);
  } else if (placement.srun) {
    if (auto text = environment_value("SLURM_TASKS_PER_NODE")) {
      try {
        counts = parse_slurm_tasks_per_node(*text, "SLURM_TASKS_PER_NODE=" + *text);
      } catch (const InputError&) {
        counts.clear();  // the views then draw one node; the run itself does not need it
      }
    }
  }
  if (counts.size() < 2 || std::accumulate(counts.begin(), counts.end(), 0LL) != world_size) return {};
  return counts;
}

bool is_this_machine(const std::string& host) {
  if (net::is_loopback(host)) return true;
  const std::string me = hostname_of_this_machine(), name = lowercase(host);
  if (!me.empty() && (name == me || name == me.substr(0, me.find('.')) || me == name.substr(0, name.find('.'))))
    return true;
  return is_interface_address(host);
}

void check_placement(const Placement& placement, const JobConfig& job, const std::string& master_addr, int nnodes) {
  if (placement.spans_hosts()) check_hosts(placement, job, master_addr, nnodes);
  else if (placement.srun) check_srun(job, master_addr, nnodes);
  // Refused here, before node 0 waits for the others: one mpirun starts every rank, so MPI ranks
  // cannot come from one controller per node.
  else if (job.backend == "mpi" && nnodes > 1)
    throw InputError(fmt::format("--backend mpi and --nnodes {}: one mpirun starts every MPI rank, from one ringlab "
                                 "run; across machines give it --hosts h1:2,h2:2 (or --hostfile) instead of "
                                 "--nnodes, or use --backend gloo with --nnodes",
                                 nnodes));
}

}  // namespace ringlab

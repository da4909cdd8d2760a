#include "engine/control/interrupt_signals.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "engine/core/abort_removal.h"
#include "engine/core/error.h"

namespace ringlab {
namespace {

// The handler may only touch what is async-signal-safe: these, write(), abort_removal's table,
// sigaction(), raise(). Everything is set up before the handlers are installed.
std::atomic<int> g_first{0};
std::atomic<int64_t> g_first_ns{0};  // when the first one came (CLOCK_MONOTONIC)
// One request can arrive as two copies: `timeout`, and wrappers like it, signal the process and
// then its whole process group, microseconds apart. The same signal again within this window is
// that echo, not a person asking a second time (two presses of Ctrl-C are further apart).
constexpr int64_t kEchoWindowNs = 50'000'000;
int g_wake[2] = {-1, -1};  // a byte written here wakes wait()
char g_abort_line[256];
size_t g_abort_line_length = 0;
constexpr int kSignalCount = 3;
struct sigaction g_previous[kSignalCount];
bool g_installed[kSignalCount] = {};
// SIGHUP: the terminal closed. Under nohup (SIGHUP ignored when this process started) it stays
// ignored, as the user asked.
constexpr int kSignals[kSignalCount] = {SIGINT, SIGTERM, SIGHUP};

int64_t monotonic_ns() {  // clock_gettime is async-signal-safe
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

void on_signal(int sig) {
  const int saved_errno = errno;
  const int64_t now = monotonic_ns();
  int first = 0;
  if (g_first.compare_exchange_strong(first, sig)) {
    g_first_ns.store(now);
    const char byte = 1;
    [[maybe_unused]] ssize_t ignored = ::write(g_wake[1], &byte, 1);
    errno = saved_errno;
    return;
  }
  // The same signal within the window is a copy of the first (no time yet: the first is being
  // handled on another thread at this moment).
  const int64_t first_ns = g_first_ns.load();
  if (sig == first && (first_ns == 0 || now - first_ns < kEchoWindowNs)) {
    errno = saved_errno;
    return;
  }
  // The second one: end now, as if there were no handler, leaving no half-made file behind: the
  // run's own files, and the temporary file of any output being written.
  abort_removal::remove_all();
  [[maybe_unused]] ssize_t ignored = ::write(STDERR_FILENO, g_abort_line, g_abort_line_length);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigaction(sig, &dfl, nullptr);
  ::raise(sig);  // delivered when this handler returns and the signal is unblocked
  errno = saved_errno;
}

}  // namespace

InterruptSignals::InterruptSignals(const std::string& program) {
  if (::pipe2(g_wake, O_CLOEXEC | O_NONBLOCK) != 0)
    throw Error(std::string("cannot set up the signal handlers: pipe: ") + std::strerror(errno));
  g_first = 0;
  g_first_ns = 0;
  // On a terminal the line may hold a progress bar and the "^C" echo: the line is cleared first
  // (decided here: the handler may not ask).
  const std::string start = ::isatty(STDERR_FILENO) ? "\r\033[K" : "\n";
  const std::string line = start + program +
                           ": signalled again: stopped at once; an output not written by now is not written "
                           "(a file of its name is left as it was)\n";
  g_abort_line_length = std::min(line.size(), sizeof g_abort_line);
  std::memcpy(g_abort_line, line.data(), g_abort_line_length);
  struct sigaction action {};
  action.sa_handler = on_signal;
  action.sa_flags = SA_RESTART;  // other threads' system calls go on undisturbed
  sigemptyset(&action.sa_mask);
  for (int i = 0; i < kSignalCount; ++i) {
    ::sigaction(kSignals[i], nullptr, &g_previous[i]);
    g_installed[i] = !(kSignals[i] == SIGHUP && g_previous[i].sa_handler == SIG_IGN);
    if (g_installed[i]) ::sigaction(kSignals[i], &action, nullptr);
  }
}

InterruptSignals::~InterruptSignals() {
  for (int slot : slots_) abort_removal::drop(slot);
  for (int i = 0; i < kSignalCount; ++i)
    if (g_installed[i]) ::sigaction(kSignals[i], &g_previous[i], nullptr);
  ::close(g_wake[0]);
  ::close(g_wake[1]);
  g_wake[0] = g_wake[1] = -1;
}

int InterruptSignals::received() const { return g_first.load(); }

int InterruptSignals::wait(std::chrono::milliseconds timeout) const {
  pollfd p{g_wake[0], POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(timeout.count())) > 0) {
    char drained[16];
    while (::read(g_wake[0], drained, sizeof drained) > 0) {
    }
  }
  return received();
}

void InterruptSignals::remove_on_abort(const std::string& path) { slots_.push_back(abort_removal::add(path)); }

}  // namespace ringlab

#include "engine/control/suspend_signal.h"

#include <signal.h>

#include <atomic>

namespace ringlab {
namespace {

std::atomic<bool> g_requested{false};  // the handler's only work: async-signal-safe
struct sigaction g_previous;
bool g_installed = false;

void on_suspend(int) { g_requested.store(true); }

}  // namespace

SuspendSignal::SuspendSignal() {
  g_requested = false;
  ::sigaction(SIGTSTP, nullptr, &g_previous);
  g_installed = g_previous.sa_handler != SIG_IGN;
  if (!g_installed) return;
  struct sigaction action {};
  action.sa_handler = on_suspend;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGTSTP, &action, nullptr);
}

SuspendSignal::~SuspendSignal() {
  if (g_installed) ::sigaction(SIGTSTP, &g_previous, nullptr);
  g_installed = false;
}

bool SuspendSignal::requested() const { return g_requested.load(); }

void SuspendSignal::stop_now() {
  g_requested = false;
  ::raise(SIGSTOP);  // the shell sees a stopped job, as after Ctrl-Z; SIGCONT resumes it here
}

}  // namespace ringlab

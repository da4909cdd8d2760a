#include "engine/control/suspend_signal.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

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

// A group is resumable from its terminal when some member's parent sits in another group of the
// same session (a shell that can `fg` it). The members are found in /proc.
bool SuspendSignal::resumable() const {
  const pid_t group = ::getpgrp(), session = ::getsid(0);
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "stat");
    std::string stat;
    std::getline(in, stat);
    const size_t after_name = stat.rfind(')');
    if (after_name == std::string::npos) continue;
    std::istringstream fields(stat.substr(after_name + 1));
    std::string state;
    long parent = 0, member_group = 0;
    if (!(fields >> state >> parent >> member_group) || member_group != group) continue;
    const pid_t parent_group = ::getpgid(static_cast<pid_t>(parent));
    if (parent_group >= 0 && parent_group != group && ::getsid(static_cast<pid_t>(parent)) == session) return true;
  }
  return false;
}

void SuspendSignal::forget() { g_requested = false; }

void SuspendSignal::stop_now() {
  g_requested = false;
  ::raise(SIGSTOP);  // the shell sees a stopped job, as after Ctrl-Z; SIGCONT resumes it here
}

}  // namespace ringlab

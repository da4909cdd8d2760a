#include "engine/events/rank_exit.h"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace ringlab {

std::string signal_name(int signal) {
  const char* abbrev = ::sigabbrev_np(signal);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(signal);
}

std::string RankExit::describe() const {
  std::string text;
  if (exited) text = "exit code " + std::to_string(exit_code);
  else if (signal != 0) text = "killed by " + signal_name(signal);
  else text = "exit status unknown (reaped elsewhere)";
  if (timed_out) text += " (timed out)";
  else if (terminated) text += " (stopped by the launcher)";
  if (was_stopped) text += "; its process had been stopped (SIGSTOP or Ctrl-Z)";
  return text;
}

namespace {

// "ValueError: ...", "torch.distributed.DistBackendError: ...", "KeyboardInterrupt": a dotted
// name ending in Error, Exception, Interrupt or Exit, alone or before a colon.
bool names_an_exception(const std::string& line) {
  size_t end = 0;
  while (end < line.size() && (std::isalnum(static_cast<unsigned char>(line[end])) || line[end] == '_' || line[end] == '.'))
    ++end;
  if (end == 0 || (end < line.size() && line[end] != ':')) return false;
  const std::string name = line.substr(0, end);
  for (const char* suffix : {"Error", "Exception", "Interrupt", "Exit"}) {
    const size_t n = std::strlen(suffix);
    if (name.size() >= n && name.compare(name.size() - n, n, suffix) == 0) return true;
  }
  return false;
}

bool blank(const std::string& line) {
  return std::all_of(line.begin(), line.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); });
}

}  // namespace

std::string last_words_of(const std::vector<std::string>& stderr_tail) {
  for (auto it = stderr_tail.rbegin(); it != stderr_tail.rend(); ++it)
    if (names_an_exception(*it)) return *it;
  for (auto it = stderr_tail.rbegin(); it != stderr_tail.rend(); ++it)
    if (!blank(*it)) return *it;
  return "";
}

}  // namespace ringlab

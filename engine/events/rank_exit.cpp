#include "engine/events/rank_exit.h"

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
  return text;
}

}  // namespace ringlab

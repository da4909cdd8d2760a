#pragma once
// How a rank's process ended, as its launcher saw it: the one fact about a rank that its own
// events cannot carry (a killed process sends nothing). Typed, so that the diagnosis reads a
// signal number and who sent it, never a message.
#include <sys/types.h>

#include <string>
#include <vector>

namespace ringlab {

struct RankExit {
  int rank = -1;             // -1 when the process was mpirun itself
  pid_t pid = -1;
  bool exited = false;       // normal exit (then exit_code), else killed by `signal`
  int exit_code = 0;
  int signal = 0;
  bool terminated = false;   // the launcher signalled it: another process failed, stop or timeout
  bool timed_out = false;    // still running when wait()'s timeout passed (then terminated)
  // Its process was stopped (SIGSTOP, Ctrl-Z on it, a debugger) when the launcher ended it: it
  // could not take part, and the others waited for it until their timeout.
  bool was_stopped = false;
  int node = 0;              // the node whose launcher saw it (multi-node runs)
  // When its launcher saw it end, on the wall clock (CLOCK_REALTIME, ns): comparable between the
  // nodes of a run, where the steady clock is not, to find which rank failed first.
  int64_t seen_unix_ns = 0;
  std::string program = {};  // rank -1's program: what started the ranks ("mpirun", "srun")
  // A rank that failed on its own: the line its stderr ended with, where the launcher relayed it
  // (a PyTorch script's: the exception its traceback ends with). Empty when unknown.
  std::string last_words = {};
  bool ok() const { return exited && exit_code == 0 && !timed_out; }
  // A starter (mpirun, srun) or a shell exits with 128 + N when signal N ended what it ran: N,
  // or 0 when this exit is not one of those.
  int signal_in_exit_code() const { return exited && exit_code > 128 && exit_code < 128 + 65 ? exit_code - 128 : 0; }
  // "exit code 3", "killed by SIGKILL"; a note is added when the launcher caused it:
  // "killed by SIGTERM (timed out)", "killed by SIGTERM (stopped by the launcher)".
  std::string describe() const;
};

// What a process's last stderr lines (oldest first) say of its end: the last line that names a
// Python exception ("SyntaxError: '(' was never closed", "RuntimeError: ..."), else the last line
// that is not blank; "" when there is none.
std::string last_words_of(const std::vector<std::string>& stderr_tail);

// Signal names as the shell spells them: "SIGKILL", "SIGTERM"; "signal 77" when unnamed.
std::string signal_name(int signal);

}  // namespace ringlab

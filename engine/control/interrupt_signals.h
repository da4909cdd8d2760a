#pragma once
// Ctrl-C (SIGINT), SIGTERM and SIGHUP (the terminal closed; left ignored under nohup) as a request
// to stop, not an instant death. The first one is only recorded, for the program to act on: stop
// the run at a step boundary, write what it has, exit 130, 143 or 129 (128 + the signal, as a
// shell reports a process killed by it). A second one, while that wind-down goes on, ends the
// process at once, by the same signal, after removing the files registered with
// remove_on_abort() (the run's checkpoints) and the temporary files of outputs being written. The same signal within
// 50 ms of the first is not a second one: `timeout` sends each signal twice. The
// workers go with it: the kernel kills them when the controller dies (PR_SET_PDEATHSIG, see
// launcher.cpp), so none is left behind.
#include <chrono>
#include <string>
#include <vector>

namespace ringlab {

class InterruptSignals {
 public:
  // Installs the handlers; one instance at a time. `program` starts the line printed when a
  // second signal ends the process ("ringlab run").
  explicit InterruptSignals(const std::string& program);
  ~InterruptSignals();  // restores the handlers that were there before
  InterruptSignals(const InterruptSignals&) = delete;
  InterruptSignals& operator=(const InterruptSignals&) = delete;

  // The first signal received (SIGINT, SIGTERM or SIGHUP); 0 while none has come.
  int received() const;
  // Waits until a signal comes (at once if one came since the last call) or `timeout` has
  // passed; returns received().
  int wait(std::chrono::milliseconds timeout) const;
  // A file or folder to remove if a second signal ends the process (copied now into
  // abort_removal's table, since the handler may not allocate; taken out again with this).
  void remove_on_abort(const std::string& path);

  static int exit_code(int signal) { return 128 + signal; }

 private:
  std::vector<int> slots_;  // remove_on_abort's, in abort_removal's table
};

}  // namespace ringlab

#pragma once
// Ctrl-Z (SIGTSTP) on a joined node of a multi-node run. A stopped controller cannot beat, and
// node 0 takes a node whose beats stand still for a lost one, ending the run, though the node's
// ranks (in a process group of their own) train on. So the controller does not stop at once: the
// handler only records the request; the program tells node 0 the node is suspended, then stops
// itself as Ctrl-Z would have (SIGSTOP), and once resumed (`fg`, SIGCONT) says it is back.
namespace ringlab {

class SuspendSignal {
 public:
  SuspendSignal();   // installs the handler, unless SIGTSTP was ignored when this process started
  ~SuspendSignal();  // restores the one that was there before
  SuspendSignal(const SuspendSignal&) = delete;
  SuspendSignal& operator=(const SuspendSignal&) = delete;

  // Ctrl-Z came, and the process has not stopped for it yet.
  bool requested() const;
  // Whether a stopped controller could be resumed from its terminal: not when its process group
  // is orphaned (POSIX: no member's parent is in another group of the same session, as when it
  // is the terminal's session leader, `ssh -t host ringlab ...`). The kernel discards Ctrl-Z for
  // such a group; the program should too (forget()).
  bool resumable() const;
  void forget();
  // Stops this process (SIGSTOP, which nothing can catch); returns once it is resumed.
  void stop_now();
};

}  // namespace ringlab

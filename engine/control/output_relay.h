#pragma once
// The ranks' stdout and stderr, through a pipe each, written out by this process on whole lines.
//
// Processes that share one terminal write into it whenever they like. A print() of an
// unbuffered Python (PYTHONUNBUFFERED=1, common in containers) is two writes, its text and then
// its newline, and two ranks printing at once came out as "[rank 1] loss 1.79[rank 0] loss
// 2.06" and an empty line. Here each line goes out in one write, to the stream it was written
// to, whole; a last line without a newline gets one when its rank's pipe closes, so it is not
// glued to the next rank's line or to the run's summary. The last lines each rank wrote to
// stderr are kept: a script that failed says why there (a Python traceback's last line).
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ringlab {

class OutputRelay {
 public:
  // Written to `out_fd` and `err_fd` (this process's stdout and stderr by default). With
  // `label_stderr`, each line a rank writes to stderr starts with "[rank N] ": the tracebacks of
  // ranks that fail at once come out line by line in turn, and only the label says whose is whose.
  explicit OutputRelay(int out_fd = 1, int err_fd = 2, bool label_stderr = false);
  ~OutputRelay();  // stops relaying, whatever is still open (what it holds of a line is written)
  OutputRelay(const OutputRelay&) = delete;
  OutputRelay& operator=(const OutputRelay&) = delete;

  // The write ends of a new rank's pipes, for the child's stdout and stderr (close-on-exec: the
  // child dup2s them onto 1 and 2). The caller closes both once the child is started. Throws
  // Error naming the rank when a pipe cannot be made.
  struct ChildEnds {
    int out = -1, err = -1;
  };
  ChildEnds add(int rank);

  // Waits until every rank's pipes have closed (its process ended, and any child it started
  // that held them) and all they carried was written; false when `timeout` passed first.
  bool drain(std::chrono::milliseconds timeout);

  // The last lines `rank` wrote to stderr (at most kTailLines, oldest first, without newlines).
  std::vector<std::string> stderr_tail(int rank) const;
  static constexpr size_t kTailLines = 20;
  // A line longer than this is written out in pieces: what a rank writes is never held unbounded.
  static constexpr size_t kMaxLine = 64 * 1024;

 private:
  struct Stream {
    int rank = -1;
    int read_fd = -1;
    int to_fd = -1;
    bool is_err = false;
    std::string pending;  // the start of a line whose newline has not come yet
    bool line_start = true;  // the next write begins a line (not the rest of a long one's pieces)
  };

  void loop();
  bool read_some(Stream& s);  // false at end of file (or a read error)
  void write_line(Stream& s, const std::string& line);
  void close_stream(Stream& s);

  const int out_fd_, err_fd_;
  const bool label_stderr_;
  int wake_[2] = {-1, -1};  // add() and the destructor wake the poll
  mutable std::mutex mutex_;
  std::condition_variable drained_;
  std::deque<Stream> streams_;  // grows under mutex_ (add); a stream's fd and line are the thread's own
  size_t open_ = 0;
  bool quit_ = false;
  std::map<int, std::deque<std::string>> tails_;
  std::thread thread_;
};

}  // namespace ringlab

#include "engine/control/output_relay.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fmt/core.h>

#include "engine/core/error.h"
#include "engine/core/thread_name.h"

namespace ringlab {
namespace {

// All of `text` in as few writes as the descriptor takes (one, for a line into a terminal or a
// pipe); false when the reader has gone (EPIPE) or another error stops it.
bool write_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

OutputRelay::OutputRelay(int out_fd, int err_fd, bool label_stderr)
    : out_fd_(out_fd), err_fd_(err_fd), label_stderr_(label_stderr) {
  if (::pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0)
    throw Error(fmt::format("the ranks' output relay: pipe: {}", std::strerror(errno)));
  thread_ = std::thread([this] { loop(); });
}

OutputRelay::~OutputRelay() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    quit_ = true;
  }
  const char byte = 'q';
  (void)!::write(wake_[1], &byte, 1);
  thread_.join();
  for (Stream& s : streams_) close_stream(s);
  close_fd(wake_[0]);
  close_fd(wake_[1]);
}

OutputRelay::ChildEnds OutputRelay::add(int rank) {
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0)
    throw Error(fmt::format("rank {}: a pipe for its stdout: {}", rank, std::strerror(errno)));
  if (::pipe2(err, O_CLOEXEC) != 0) {
    const int error = errno;
    ::close(out[0]);
    ::close(out[1]);
    throw Error(fmt::format("rank {}: a pipe for its stderr: {}", rank, std::strerror(error)));
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    streams_.push_back(Stream{rank, out[0], out_fd_, false, {}});
    streams_.push_back(Stream{rank, err[0], err_fd_, true, {}});
    open_ += 2;
  }
  const char byte = 'a';
  (void)!::write(wake_[1], &byte, 1);
  return {out[1], err[1]};
}

bool OutputRelay::drain(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  return drained_.wait_for(lock, timeout, [&] { return open_ == 0; });
}

std::vector<std::string> OutputRelay::stderr_tail(int rank) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = tails_.find(rank);
  return it == tails_.end() ? std::vector<std::string>{} : std::vector<std::string>(it->second.begin(), it->second.end());
}

void OutputRelay::loop() {
  name_this_thread("output relay");
  // A reader that went away (`ringlab run ... | head`) must not kill the controller with SIGPIPE:
  // blocked on this thread, the write fails with EPIPE instead, and the ranks' output is dropped.
  sigset_t pipe_signal;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
  std::vector<pollfd> fds;
  std::vector<size_t> which;
  for (;;) {
    fds.clear();
    which.clear();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (quit_) return;
      for (size_t i = 0; i < streams_.size(); ++i)
        if (streams_[i].read_fd >= 0) {
          fds.push_back({streams_[i].read_fd, POLLIN, 0});
          which.push_back(i);
        }
    }
    fds.push_back({wake_[0], POLLIN, 0});
    if (::poll(fds.data(), fds.size(), 1000) < 0) continue;  // EINTR
    if (fds.back().revents != 0) {
      char bytes[64];
      while (::read(wake_[0], bytes, sizeof(bytes)) > 0) {
      }
    }
    for (size_t k = 0; k + 1 < fds.size(); ++k) {
      if (fds[k].revents == 0) continue;
      // streams_ only grows, under the lock; this thread alone touches a stream's fd and line.
      std::unique_lock<std::mutex> lock(mutex_);
      Stream& s = streams_[which[k]];
      lock.unlock();
      if (!read_some(s)) close_stream(s);
    }
  }
}

bool OutputRelay::read_some(Stream& s) {
  char buffer[65536];
  const ssize_t n = ::read(s.read_fd, buffer, sizeof(buffer));
  if (n < 0) return errno == EINTR || errno == EAGAIN;
  if (n == 0) return false;
  s.pending.append(buffer, static_cast<size_t>(n));
  size_t start = 0;
  for (size_t nl; (nl = s.pending.find('\n', start)) != std::string::npos; start = nl + 1)
    write_line(s, s.pending.substr(start, nl + 1 - start));
  s.pending.erase(0, start);
  if (s.pending.size() >= kMaxLine) {
    write_line(s, s.pending);
    s.pending.clear();
  }
  return true;
}

void OutputRelay::write_line(Stream& s, const std::string& line) {
  const std::string out = s.is_err && label_stderr_ && s.line_start ? fmt::format("[rank {}] {}", s.rank, line) : line;
  s.line_start = !line.empty() && line.back() == '\n';
  if (s.to_fd >= 0 && !write_all(s.to_fd, out)) s.to_fd = -1;  // the reader is gone: read on, write no more
  if (!s.is_err) return;
  std::string text = line;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  std::lock_guard<std::mutex> lock(mutex_);
  std::deque<std::string>& tail = tails_[s.rank];
  tail.push_back(std::move(text));
  if (tail.size() > kTailLines) tail.pop_front();
}

void OutputRelay::close_stream(Stream& s) {
  if (s.read_fd < 0) return;
  if (!s.pending.empty()) write_line(s, s.pending + "\n");
  s.pending.clear();
  close_fd(s.read_fd);
  std::lock_guard<std::mutex> lock(mutex_);
  --open_;
  drained_.notify_all();
}

}  // namespace ringlab

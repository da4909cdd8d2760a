#pragma once
// Small RAII helpers over POSIX TCP sockets. Every socket is non-blocking and every wait goes
// through poll() with a deadline, so no read, write or connect can hang past its timeout.
// Errors name the host:port they concern ("cannot bind 127.0.0.1:29500: address already in use").
#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ringlab::net {

using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;
inline constexpr Deadline kNoDeadline = Deadline::max();

// now + d, saturating instead of overflowing for huge durations.
Deadline deadline_after(std::chrono::milliseconds d);
// "5 s", "250 ms": for messages.
std::string describe_duration(std::chrono::milliseconds d);
// "127.0.0.1:29500", "[::1]:29500".
std::string host_port(const std::string& host, uint16_t port);

// Owns one file descriptor; closes it when destroyed.
class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() { close(); }
  Socket(Socket&& other) noexcept : fd_(other.release()) {}
  Socket& operator=(Socket&& other) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void close();
  // Ends both directions at once: wakes any thread blocked in poll() on this socket.
  void shutdown() const;

 private:
  int fd_ = -1;
};

// Listens on host:port (port 0: any free port) with SO_REUSEADDR.
Socket listen_tcp(const std::string& host, uint16_t port, int backlog = 128);
// Accepts one pending connection; an invalid Socket when none is pending. LimitError when the
// process is out of descriptors (EMFILE, ENFILE), naming RLIMIT_NOFILE.
Socket accept_tcp(const Socket& listener);
uint16_t local_port(const Socket& socket);
// "127.0.0.1:54321": the other end of a connected socket.
std::string peer_name(const Socket& socket);

// Connects to host:port, retrying refused connections (the server may still be starting) until
// `timeout` passes: then TimeoutError "cannot reach host:port within 5 s (connection refused)".
Socket connect_tcp(const std::string& host, uint16_t port, std::chrono::milliseconds timeout);
// Sends small messages at once instead of waiting to coalesce them (Nagle's algorithm).
void set_nodelay(const Socket& socket);

// Waits until `fd` is ready for `events` (POLLIN / POLLOUT); false when the deadline passed.
// A hang-up or error counts as ready: the next read or write reports it.
bool wait_ready(int fd, short events, Deadline deadline);

enum class ReadStatus { Complete, Closed };
// Reads exactly `size` bytes. Closed: the peer closed the connection before the first byte.
// Throws Error when it closes midway, TimeoutError when the deadline passes.
ReadStatus read_exact(int fd, void* data, size_t size, Deadline deadline, std::string_view peer);
// Writes all `size` bytes (MSG_NOSIGNAL: a closed peer is an Error, never SIGPIPE).
void write_all(int fd, const void* data, size_t size, Deadline deadline, std::string_view peer);
// True when the peer has closed its end (or the connection failed), checked without reading:
// a server holding a blocking request uses it to notice that nobody waits for the answer.
bool peer_hung_up(int fd);
// One read that never blocks: the number of bytes read, 0 when the peer closed, -1 when nothing
// is available yet. Throws Error on a connection error.
ssize_t read_some(int fd, void* data, size_t size, std::string_view peer);

// Compares two secrets in time that depends only on their lengths, not on where they differ.
bool tokens_equal(std::string_view a, std::string_view b);

}  // namespace ringlab::net

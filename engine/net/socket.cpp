#include "engine/net/socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstring>
#include <memory>
#include <thread>

#include <fmt/core.h>

#include "engine/core/error.h"
#include "engine/core/limits.h"

namespace ringlab::net {
namespace {

// strerror, with a lower-case first letter so it reads well after a colon.
std::string errno_text(int err) {
  std::string text = std::strerror(err);
  if (!text.empty()) text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
  return text;
}

int poll_timeout_ms(Deadline deadline) {
  if (deadline == kNoDeadline) return -1;
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, INT_MAX));
}

struct AddrInfoDeleter {
  void operator()(addrinfo* ai) const { freeaddrinfo(ai); }
};
using AddrInfoList = std::unique_ptr<addrinfo, AddrInfoDeleter>;

// getaddrinfo's return code; on success `out` holds the addresses to try.
int resolve(const std::string& host, uint16_t port, bool passive, AddrInfoList& out) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
  const std::string service = std::to_string(port);
  addrinfo* list = nullptr;
  const int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &list);
  out.reset(rc == 0 ? list : nullptr);
  return rc;
}

// getaddrinfo's answers for a name that has no address (as opposed to a resolver that failed).
bool names_no_host(int rc) { return rc == EAI_NONAME || rc == EAI_NODATA; }

std::string sockaddr_text(const sockaddr_storage& addr) {
  char text[INET6_ADDRSTRLEN] = "?";
  if (addr.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&addr);
    inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
    return host_port(text, ntohs(in->sin_port));
  }
  if (addr.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&addr);
    inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof text);
    return host_port(text, ntohs(in6->sin6_port));
  }
  return "unknown address";
}

// One non-blocking connect attempt to one address: 0 and a connected socket, or the errno.
int try_connect(const addrinfo& ai, Deadline deadline, Socket& out) {
  Socket s(::socket(ai.ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!s.valid()) return errno;
  if (::connect(s.fd(), ai.ai_addr, ai.ai_addrlen) != 0) {
    if (errno != EINPROGRESS && errno != EINTR) return errno;
    if (!wait_ready(s.fd(), POLLOUT, deadline)) return ETIMEDOUT;
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(s.fd(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) return errno;
    if (err != 0) return err;
  }
  out = std::move(s);
  return 0;
}

}  // namespace

Deadline deadline_after(std::chrono::milliseconds d) {
  const Deadline now = Clock::now();
  if (d >= std::chrono::duration_cast<std::chrono::milliseconds>(kNoDeadline - now)) return kNoDeadline;
  return now + d;
}

std::string describe_duration(std::chrono::milliseconds d) {
  if (d.count() % 1000 == 0) return fmt::format("{} s", d.count() / 1000);
  return fmt::format("{} ms", d.count());
}

std::string host_port(const std::string& host, uint16_t port) {
  if (host.find(':') != std::string::npos) return fmt::format("[{}]:{}", host, port);
  return fmt::format("{}:{}", host, port);
}

Socket& Socket::operator=(Socket&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = other.release();
  }
  return *this;
}

void Socket::close() {
  if (fd_ >= 0) ::close(fd_);  // no retry on EINTR: on Linux the descriptor is gone either way
  fd_ = -1;
}

void Socket::shutdown() const {
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
}

Socket listen_tcp(const std::string& host, uint16_t port, int backlog) {
  const std::string where = host_port(host, port);
  AddrInfoList list;
  if (const int rc = resolve(host, port, true, list); rc != 0) {
    if (names_no_host(rc))
      throw HostNotFoundError(fmt::format("cannot bind {}: {}: this machine cannot resolve '{}': give one of its own "
                                          "addresses", where, gai_strerror(rc), host));
    if (rc == EAI_AGAIN)
      throw HostNotFoundError(fmt::format("cannot bind {}: {}: no name server answered for '{}': give one of this "
                                          "machine's own addresses", where, gai_strerror(rc), host));
    throw Error(fmt::format("cannot bind {}: {}", where, gai_strerror(rc)));
  }
  int last_err = EADDRNOTAVAIL;
  for (const addrinfo* ai = list.get(); ai; ai = ai->ai_next) {
    Socket s(::socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!s.valid()) {
      last_err = errno;
      continue;
    }
    const int one = 1;
    setsockopt(s.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(s.fd(), ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(s.fd(), backlog) != 0) {
      last_err = errno;
      continue;
    }
    return s;
  }
  // The two a person meets: an address another machine has, and a port another program holds.
  const char* why = last_err == EADDRNOTAVAIL ? ": it is not an address of this machine"
                    : last_err == EADDRINUSE  ? ": another program (or run) listens on that port; give another port"
                                              : "";
  throw Error(fmt::format("cannot bind {}: {}{}", where, errno_text(last_err), why));
}

Socket accept_tcp(const Socket& listener) {
  while (true) {
    const int fd = ::accept4(listener.fd(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd >= 0) return Socket(fd);
    // A connection that was reset while queued is simply gone; try the next one.
    if (errno == EINTR || errno == ECONNABORTED) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return Socket();
    if (errno == EMFILE || errno == ENFILE)
      throw LimitError(fmt::format("accept on port {} failed: out of file descriptors ({}); {}", local_port(listener),
                                   errno_text(errno), nofile_limit_text()));
    throw Error(fmt::format("accept on port {} failed: {}", local_port(listener), errno_text(errno)));
  }
}

uint16_t local_port(const Socket& socket) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (getsockname(socket.fd(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) return 0;
  if (addr.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  if (addr.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
  return 0;
}

std::string peer_name(const Socket& socket) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (getpeername(socket.fd(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) return "unknown peer";
  return sockaddr_text(addr);
}

Socket connect_tcp(const std::string& host, uint16_t port, std::chrono::milliseconds timeout) {
  const std::string where = host_port(host, port);
  const Deadline deadline = deadline_after(timeout);
  std::string last_error = "no address";
  auto pause = std::chrono::milliseconds(10);
  while (true) {
    AddrInfoList list;
    const int rc = resolve(host, port, false, list);
    const bool unresolved = rc == EAI_AGAIN;  // no name server answered: tried again, like a refusal
    if (rc != 0 && names_no_host(rc))
      throw HostNotFoundError(fmt::format("cannot reach {}: {}: this machine cannot resolve the host name '{}' (a typo, "
                                          "or a name only other machines know: give its IP address)", where,
                                          gai_strerror(rc), host));
    if (rc != 0 && rc != EAI_AGAIN)
      throw Error(fmt::format("cannot reach {}: {}", where, gai_strerror(rc)));
    if (rc != 0) last_error = gai_strerror(rc);
    for (const addrinfo* ai = list.get(); ai; ai = ai->ai_next) {
      Socket s;
      const int err = try_connect(*ai, deadline, s);
      if (err == 0) return s;
      last_error = errno_text(err);
    }
    // Refused or unreachable: the server may not be listening yet, so try again until the deadline.
    const auto left = deadline - Clock::now();
    if (left <= Clock::duration::zero() && unresolved)
      throw HostNotFoundError(fmt::format("cannot reach {}: no name server answered for '{}' within {} ({}): give its "
                                          "IP address", where, host, describe_duration(timeout), last_error));
    if (left <= Clock::duration::zero())
      throw TimeoutError(fmt::format("cannot reach {} within {} ({})", where,
                                     describe_duration(timeout), last_error));
    std::this_thread::sleep_for(std::min<Clock::duration>(pause, left));
    pause = std::min(pause * 2, std::chrono::milliseconds(200));
  }
}

void set_nodelay(const Socket& socket) {
  const int one = 1;
  setsockopt(socket.fd(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

bool wait_ready(int fd, short events, Deadline deadline) {
  while (true) {
    pollfd p{fd, events, 0};
    const int rc = ::poll(&p, 1, poll_timeout_ms(deadline));
    if (rc > 0) return true;
    if (rc < 0 && errno != EINTR) return true;  // let the read or write report the error
    if (rc == 0 && Clock::now() >= deadline) return false;
  }
}

bool peer_hung_up(int fd) {
  pollfd p{fd, POLLRDHUP, 0};
  const int rc = ::poll(&p, 1, 0);
  return rc > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

ssize_t read_some(int fd, void* data, size_t size, std::string_view peer) {
  while (true) {
    const ssize_t n = ::recv(fd, data, size, MSG_DONTWAIT);
    if (n >= 0) return n;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return -1;
    throw Error(fmt::format("reading from {} failed: {}", peer, errno_text(errno)));
  }
}

ReadStatus read_exact(int fd, void* data, size_t size, Deadline deadline, std::string_view peer) {
  auto* p = static_cast<uint8_t*>(data);
  size_t done = 0;
  while (done < size) {
    const ssize_t n = read_some(fd, p + done, size - done, peer);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n == 0) {
      if (done == 0) return ReadStatus::Closed;
      throw Error(fmt::format("{} closed the connection in the middle of a message", peer));
    }
    if (!wait_ready(fd, POLLIN, deadline))
      throw TimeoutError(fmt::format("no data from {} before the timeout", peer));
  }
  return ReadStatus::Complete;
}

void write_all(int fd, const void* data, size_t size, Deadline deadline, std::string_view peer) {
  const auto* p = static_cast<const uint8_t*>(data);
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::send(fd, p + done, size - done, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
      throw Error(fmt::format("writing to {} failed: {}", peer, errno_text(errno)));
    if (!wait_ready(fd, POLLOUT, deadline))
      throw TimeoutError(fmt::format("{} did not accept data before the timeout", peer));
  }
}

bool tokens_equal(std::string_view a, std::string_view b) {
  // Touch every byte of the longer string whatever the contents, so the time taken does not
  // tell an attacker how many leading bytes of a guess were right.
  const size_t n = std::max(a.size(), b.size());
  unsigned diff = a.size() == b.size() ? 0u : 1u;
  for (size_t i = 0; i < n; ++i) {
    const auto x = static_cast<unsigned char>(i < a.size() ? a[i] : 0);
    const auto y = static_cast<unsigned char>(i < b.size() ? b[i] : 0);
    diff |= static_cast<unsigned>(x ^ y);
  }
  return diff == 0;
}

}  // namespace ringlab::net

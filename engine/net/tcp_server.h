#pragma once
// The part every ringlab server shares: listen on host:port, accept connections on a background
// thread, and serve each one on its own thread. Connections are few (one or two per rank), so a
// thread each keeps every handler a plain sequence of blocking reads with deadlines (see
// docs/architecture.md for why not an event loop).
// A connection that cannot get a thread (RLIMIT_NPROC) is refused, and an accept that fails for
// want of descriptors (RLIMIT_NOFILE) is retried: both are kept in limit_failure(), for the
// server's owner to end what cannot go on.
// stop() wakes the accept loop, shuts every open connection down (which wakes a handler blocked
// on its socket) and joins all the threads.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "engine/net/socket.h"

namespace ringlab::net {

class TcpServer {
 public:
  // Runs on its own thread for one accepted connection; the connection closes when it returns.
  // An exception it throws is passed to `on_error` with the peer's address.
  using Handler = std::function<void(Socket& socket, const std::string& peer)>;
  using ErrorHandler = std::function<void(const std::string& message)>;

  // Binds at once (throws Error naming host:port when it cannot) and starts accepting.
  TcpServer(const std::string& host, uint16_t port, Handler handler, ErrorHandler on_error,
            size_t max_connections = 1024);
  ~TcpServer();
  TcpServer(const TcpServer&) = delete;
  TcpServer& operator=(const TcpServer&) = delete;

  uint16_t port() const;
  const std::string& host() const;
  void stop();  // idempotent; returns once every thread has ended
  size_t open_connections() const;
  // The first limit the server hit ("refused the connection from ...: cannot start a thread ...;
  // RLIMIT_NPROC (ulimit -u) is 24 ..."); "" while none.
  std::string limit_failure() const;
  // Waits until no connection is open; false when the timeout passed first.
  bool wait_no_connections(std::chrono::milliseconds timeout) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ringlab::net

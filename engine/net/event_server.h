#pragma once
// The controller's end of the event stream: accepts one connection per worker, checks its hello
// (magic, protocol version, the run's token, rank) and hands every event it then sends to the
// sink (the controller's EventStore). Each connection is read on its own thread, so the events of
// one rank arrive in the order that rank emitted them.
// A connection with a wrong token, an unknown version or a malformed or oversized frame is closed
// and the reason kept in errors(); the server itself never stops because of one.
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/events/event.h"

namespace ringlab {

class EventServer {
 public:
  // Binds at once (port 0: any free port; Error naming host:port when it cannot) and starts
  // accepting. `sink` must outlive the server; emit() is called from the connection threads.
  EventServer(const std::string& host, uint16_t port, std::string token, EventSink& sink);
  ~EventServer();  // stop()
  EventServer(const EventServer&) = delete;
  EventServer& operator=(const EventServer&) = delete;

  uint16_t port() const;
  void stop();  // closes every connection and joins every thread

  // One line per connection the server closed because something was wrong (the most recent
  // ones): "connection from 127.0.0.1:41234 (rank 2): wrong token".
  std::vector<std::string> errors() const;
  // The first limit (descriptors, threads) the server hit; "" while none (see TcpServer).
  std::string limit_failure() const;
  // Events received so far, by the rank each connection announced in its hello.
  std::map<int, uint64_t> received_per_rank() const;
  uint64_t received() const;
  size_t open_connections() const;
  // Waits until every accepted connection has been read to its end and closed (the workers
  // flush and close theirs when they exit); false when the timeout passed first.
  bool wait_drained(std::chrono::milliseconds timeout) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ringlab

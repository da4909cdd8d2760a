#pragma once
// The worker's end of the event stream. emit() only moves the event into an in-memory queue; a
// background thread takes the whole queue at once every `send_interval`, encodes it and writes it
// with one send(), so the training loop never waits on the network and a step's dozens of events
// cost one system call between them, not one each.
// Why 5 ms between sends: each send wakes two sleeping threads, this sender and the controller's
// reader for this rank, and a woken thread takes a core from a rank that is computing. With four
// ranks on two cores a 1 ms interval woke 2.4 threads per step and cost a quarter of the step
// (docs/speed.md, "Where the 4-rank step went"); 5 ms wakes 0.4 per step, and an event still
// reaches the app's window well within one 60 Hz frame.
// No event is ever dropped: when the queue is full, emit() waits for the sender to catch up.
//
// The server is the controller, not a peer: when it stops reading (its process suspended with
// Ctrl-Z or SIGSTOP) the client waits for it up to `controller_patience`, far longer than the
// run's timeout for a peer, and says so when it gives up ("the controller ... has not read any
// event for 10 min"). A connection the controller closed (its process gone) fails at once.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "engine/events/event.h"

namespace ringlab {

struct EventClientOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  std::string token;
  int rank = 0;
  std::chrono::milliseconds timeout{60'000};  // bounds connecting and the handshake
  // Bounds waiting on a full queue, a stalled send and the flush on close: the controller's
  // reading, not a peer's.
  std::chrono::milliseconds controller_patience{600'000};
  size_t queue_capacity = 1 << 16;                  // events waiting to be sent
  bool wants_chunks = true;                         // false at trace level "steps"
  std::chrono::microseconds send_interval{5'000};   // how long an event may wait to be batched
};

class EventClient : public EventSink {
 public:
  // Connects (retrying until the timeout while the server is not up) and sends the hello:
  // Error "event server at host:port refused the token" when the token is wrong.
  explicit EventClient(EventClientOptions options);
  ~EventClient() override;  // close(), swallowing its errors
  EventClient(const EventClient&) = delete;
  EventClient& operator=(const EventClient&) = delete;

  // Queues the event. Throws when the sender has failed (the connection is gone) or the queue
  // stayed full for the whole timeout.
  void emit(Event event) override;
  bool wants_chunks() const override;
  void set_wants_chunks(bool on);

  // Waits until every event emitted so far has been written to the socket.
  void flush();
  void flush_events() override { flush(); }
  void flush(std::chrono::milliseconds timeout);
  // Flushes, ends the sender thread and closes the connection; throws what went wrong.
  void close();

  uint64_t sent() const;  // events written to the socket so far
  // The controller is not keeping up: a write has waited for it longer than `stall`, or the
  // queue is more than a quarter full. Cheap: no system call.
  bool behind(std::chrono::milliseconds stall = std::chrono::milliseconds(100)) const;
  const std::string& server() const;  // "127.0.0.1:29501"

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ringlab

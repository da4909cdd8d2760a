#include "engine/net/event_client.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include <fmt/core.h>

#include "engine/core/clock.h"
#include "engine/core/error.h"
#include "engine/core/thread_name.h"
#include "engine/core/limits.h"
#include "engine/net/socket.h"
#include "engine/net/event_codec.h"
#include "engine/net/wire.h"

namespace ringlab {
namespace {

// With nothing to send, the sender sleeps this long between looks at the queue; the first event
// after such a pause wakes it at once.
constexpr std::chrono::milliseconds kIdleInterval(50);
// Bytes encoded before they are written: a batch bigger than this goes out in several sends.
constexpr size_t kWriteChunkBytes = 256 * 1024;

}  // namespace

struct EventClient::Impl {
  EventClientOptions options;
  std::string where;
  net::Socket socket;
  std::atomic<bool> wants_chunks{true};
  size_t wake_at = 1;  // a queue this long wakes the sender before its interval is up

  mutable std::mutex mutex;
  std::condition_variable work;      // the sender waits here for events
  std::condition_variable progress;  // emit() (queue full) and flush() wait here
  std::vector<Event> pending;
  uint64_t enqueued = 0;
  uint64_t sent = 0;
  size_t blocked_producers = 0;
  bool sender_idle = false;
  int64_t clock_offset = 0;  // the server's steady clock minus this process's (0 on one machine)
  bool flush_requested = false;
  bool closing = false;
  std::string failure;  // why the sender stopped; empty while it runs
  std::thread sender;
  std::atomic<int64_t> write_started_ns{0};  // while a write waits for the controller; 0 otherwise

  ErrorContext context() const { return ErrorContext{options.rank, "events", -1}; }

  [[noreturn]] void throw_failure() const {
    throw Error(context(), fmt::format("sending events to {} failed: {}", where, failure));
  }

  void handshake() {
    std::vector<uint8_t> hello;
    event_codec::encode_hello({event_codec::kVersion, options.token, options.rank}, hello);
    const auto deadline = net::deadline_after(options.timeout);
    uint8_t answer = 0;
    uint8_t server_clock[8] = {};
    net::ReadStatus status = net::ReadStatus::Closed;
    const int64_t sent_ns = now_ns();
    try {
      net::write_all(socket.fd(), hello.data(), hello.size(), deadline, where);
      status = net::read_exact(socket.fd(), &answer, 1, deadline, where);
      if (status == net::ReadStatus::Complete && answer == 0)
        status = net::read_exact(socket.fd(), server_clock, sizeof(server_clock), deadline, where);
    } catch (const TimeoutError& e) {
      throw TimeoutError(context(), fmt::format("event server at {} did not answer the handshake: {}", where, e.what()));
    } catch (const Error& e) {
      // A server at a limit (descriptors, threads) closes a connection it cannot serve.
      throw Error(context(), fmt::format("event server at {} refused the connection: {}", where, e.what()));
    }
    if (status == net::ReadStatus::Closed)
      throw Error(context(), fmt::format("event server at {} closed the connection during the handshake", where));
    if (answer == 1) throw TokenRefusedError(context(), fmt::format("event server at {} refused the token", where));
    if (answer == 2)
      throw Error(context(), fmt::format("event server at {} speaks another protocol version than {}",
                                         where, event_codec::kVersion));
    if (answer != 0)
      throw Error(context(), fmt::format("event server at {} answered the handshake with code {}", where, answer));
    wire::Reader clock({server_clock, sizeof(server_clock)}, "the event server's clock");
    clock_offset = event_codec::clock_offset_ns(sent_ns, clock.i64(), now_ns());
  }

  // On another machine than the event server's, the event goes on the server's timeline.
  void to_server_clock(Event& event) const {
    if (clock_offset == 0) return;
    if (event.t_begin_ns != 0) event.t_begin_ns += clock_offset;
    if (event.t_end_ns != 0) event.t_end_ns += clock_offset;
  }

  void push(Event&& event) {
    to_server_clock(event);
    std::unique_lock lock(mutex);
    if (!failure.empty()) throw_failure();
    if (closing) throw Error(context(), "emit() after close()");
    if (pending.size() >= options.queue_capacity) wait_for_room(lock);
    pending.push_back(std::move(event));
    ++enqueued;
    // Waking the sender is a system call: do it only when a batch is full, or when the sender
    // is in its long idle sleep and this is the first event in a while.
    const bool wake = pending.size() == wake_at || (sender_idle && pending.size() == 1);
    lock.unlock();
    if (wake) work.notify_one();
  }

  void wait_for_room(std::unique_lock<std::mutex>& lock) {
    ++blocked_producers;
    work.notify_one();
    const bool room = progress.wait_for(lock, options.controller_patience, [&] {
      return pending.size() < options.queue_capacity || !failure.empty() || closing;
    });
    --blocked_producers;
    if (!failure.empty()) throw_failure();
    if (closing) throw Error(context(), "emit() after close()");
    if (!room)
      throw TimeoutError(context(), fmt::format("the queue of events to {} stayed full ({} events) for {}: {}",
                                                where, options.queue_capacity,
                                                net::describe_duration(options.controller_patience),
                                                not_reading()));
  }

  std::string not_reading() const {
    return fmt::format("the controller has not read any event for {}; is it suspended (Ctrl-Z, SIGSTOP)?",
                       net::describe_duration(options.controller_patience));
  }

  void sender_loop() {
    name_this_thread("event sender");
    std::vector<Event> batch;
    std::vector<uint8_t> buffer;
    try {
      while (take_batch(batch)) {
        send(batch, buffer);
        {
          std::lock_guard lock(mutex);
          sent += batch.size();
        }
        progress.notify_all();
        batch.clear();
      }
    } catch (const std::exception& e) {
      std::lock_guard lock(mutex);
      failure = e.what();
    }
    progress.notify_all();
  }

  // Waits for events and swaps the whole queue into `batch`; false once closing and empty.
  bool take_batch(std::vector<Event>& batch) {
    std::unique_lock lock(mutex);
    while (true) {
      const auto interval = sender_idle ? std::chrono::microseconds(kIdleInterval) : options.send_interval;
      // Send early only when there is something to send: a predicate that held with an empty
      // queue would spin here with the lock held and starve the producers.
      work.wait_for(lock, interval, [&] {
        return closing || (!pending.empty() && (flush_requested || blocked_producers > 0 ||
                                                 pending.size() >= wake_at || sender_idle));
      });
      if (!pending.empty()) break;
      if (closing) return false;
      sender_idle = true;
      flush_requested = false;
    }
    sender_idle = false;
    flush_requested = false;
    batch.swap(pending);  // `pending` gets the previous batch's capacity: no allocation per batch
    if (blocked_producers > 0) progress.notify_all();
    return true;
  }

  void send(const std::vector<Event>& batch, std::vector<uint8_t>& buffer) {
    buffer.clear();
    for (const Event& event : batch) {
      event_codec::encode(event, buffer);
      if (buffer.size() >= kWriteChunkBytes) write(buffer);
    }
    write(buffer);
  }

  // A closed connection fails the write at once (the controller is gone); one that stays open
  // but unread (the controller is suspended) is waited on for the controller's patience.
  void write(std::vector<uint8_t>& buffer) {
    if (buffer.empty()) return;
    write_started_ns = now_ns();
    try {
      net::write_all(socket.fd(), buffer.data(), buffer.size(), net::deadline_after(options.controller_patience),
                     where);
    } catch (const TimeoutError&) {
      throw TimeoutError(not_reading());
    }
    write_started_ns = 0;
    buffer.clear();
  }

  bool behind(std::chrono::milliseconds stall) const {
    const int64_t started = write_started_ns.load();
    if (started != 0 && now_ns() - started > std::chrono::nanoseconds(stall).count()) return true;
    std::lock_guard lock(mutex);
    return pending.size() > options.queue_capacity / 4;
  }

  void flush(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex);
    const uint64_t target = enqueued;
    if (sent >= target && failure.empty()) return;
    flush_requested = true;
    work.notify_one();
    const bool done = progress.wait_for(lock, timeout, [&] { return sent >= target || !failure.empty(); });
    if (!failure.empty()) throw_failure();
    if (!done)
      throw TimeoutError(context(), fmt::format("{} events were still unsent to {} after {}: the controller is not "
                                                "reading them; is it suspended (Ctrl-Z, SIGSTOP)?",
                                                target - sent, where, net::describe_duration(timeout)));
  }

  void close() {
    if (!sender.joinable()) return;
    std::exception_ptr error;
    try {
      flush(options.controller_patience);
    } catch (...) {
      error = std::current_exception();
      socket.shutdown();  // a sender stuck in a send fails now instead of at its own timeout
    }
    {
      std::lock_guard lock(mutex);
      closing = true;
    }
    work.notify_one();
    progress.notify_all();
    sender.join();
    socket.close();
    if (error) std::rethrow_exception(error);
  }
};

EventClient::EventClient(EventClientOptions options) : impl_(std::make_unique<Impl>()) {
  Impl& impl = *impl_;
  impl.options = std::move(options);
  impl.options.queue_capacity = std::max<size_t>(impl.options.queue_capacity, 1);
  impl.wake_at = std::clamp<size_t>(impl.options.queue_capacity / 2, 1, 4096);
  impl.wants_chunks = impl.options.wants_chunks;
  impl.where = net::host_port(impl.options.host, impl.options.port);
  impl.socket = net::connect_tcp(impl.options.host, impl.options.port, impl.options.timeout);
  net::set_nodelay(impl.socket);
  impl.handshake();
  impl.sender = start_thread(fmt::format("rank {}'s event sender", impl.options.rank),
                             [&impl] { impl.sender_loop(); });
}

EventClient::~EventClient() {
  try {
    impl_->close();
  } catch (...) {
  }
}

void EventClient::emit(Event event) { impl_->push(std::move(event)); }
bool EventClient::wants_chunks() const { return impl_->wants_chunks.load(std::memory_order_relaxed); }
void EventClient::set_wants_chunks(bool on) { impl_->wants_chunks.store(on, std::memory_order_relaxed); }
void EventClient::flush() { impl_->flush(impl_->options.controller_patience); }
void EventClient::flush(std::chrono::milliseconds timeout) { impl_->flush(timeout); }
void EventClient::close() { impl_->close(); }

uint64_t EventClient::sent() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->sent;
}

const std::string& EventClient::server() const { return impl_->where; }

bool EventClient::behind(std::chrono::milliseconds stall) const { return impl_->behind(stall); }

}  // namespace ringlab

#include "engine/net/event_server.h"

#include <atomic>
#include <deque>
#include <mutex>
#include <optional>

#include <fmt/core.h>

#include "engine/core/clock.h"
#include "engine/core/error.h"
#include "engine/core/thread_name.h"
#include "engine/net/framing.h"
#include "engine/net/hello_gate.h"
#include "engine/net/socket.h"
#include "engine/net/tcp_server.h"
#include "engine/net/event_codec.h"
#include "engine/net/wire.h"

namespace ringlab {
namespace {

// A client says hello as soon as it connects; one that stays silent is closed quickly, and only
// only so many may wait at once (see HelloGate).
constexpr std::chrono::milliseconds kHelloTimeout(3'000);
constexpr size_t kMaxConnectionsBeforeHello = 64;
constexpr std::chrono::milliseconds kFrameTimeout(30'000);
constexpr size_t kMaxErrorsKept = 100;

// The answer to a hello: one byte.
enum class HelloStatus : uint8_t { Accepted = 0, WrongToken = 1, WrongVersion = 2 };

}  // namespace

struct EventServer::Impl {
  std::string token;
  EventSink* sink = nullptr;

  mutable std::mutex mutex;  // guards errors and per_rank
  std::deque<std::string> errors;
  std::map<int, uint64_t> per_rank;
  std::atomic<uint64_t> total{0};

  net::HelloGate hello_gate{kMaxConnectionsBeforeHello};
  std::unique_ptr<net::TcpServer> server;  // started last: its threads use everything above

  void record_error(const std::string& message) {
    std::lock_guard lock(mutex);
    errors.push_back(message);
    if (errors.size() > kMaxErrorsKept) errors.pop_front();
  }

  void count(int rank, uint64_t events) {
    if (events == 0) return;
    {
      std::lock_guard lock(mutex);
      per_rank[rank] += events;
    }
    total.fetch_add(events);
  }

  void serve(net::Socket& socket, const std::string& peer) {
    net::FrameReader reader(socket.fd(), event_codec::kMaxFrameBytes, peer);
    std::optional<int> rank;
    try {
      net::HelloGate::Pass pass(hello_gate, socket.fd());
      try {
        rank = handshake(socket, reader, pass);
      } catch (const Error&) {
        if (pass.cut_off()) return;  // the gate counts it (summary in errors())
        throw;
      }
      if (!rank) return;
      name_this_thread(fmt::format("events r{}", *rank));
      receive(reader, *rank);
    } catch (const std::exception& e) {
      const std::string who = rank ? fmt::format("{} (rank {})", peer, *rank) : peer;
      record_error(fmt::format("connection from {}: {}", who, e.what()));
    }
  }

  // Reads and answers the hello; returns the rank it announced, or nothing when the peer hung
  // up before saying anything. Throws when the hello is refused.
  std::optional<int> handshake(net::Socket& socket, net::FrameReader& reader, net::HelloGate::Pass& pass) {
    const auto frame = reader.next(net::deadline_after(kHelloTimeout), kFrameTimeout);
    // It has spoken: whatever the answer, it no longer counts as a silent connection.
    if (!frame || !pass.release()) return std::nullopt;
    const event_codec::Hello hello = event_codec::decode_hello_body(*frame);
    HelloStatus status = HelloStatus::Accepted;
    if (hello.version != event_codec::kVersion) status = HelloStatus::WrongVersion;
    else if (!net::tokens_equal(hello.token, token)) status = HelloStatus::WrongToken;
    // Accepted: the status and this machine's steady clock, for a client on another machine to
    // put its timestamps on this one's timeline (see EventClient's handshake).
    std::vector<uint8_t> answer;
    wire::Writer w(answer);
    w.u8(static_cast<uint8_t>(status));
    if (status == HelloStatus::Accepted) w.i64(now_ns());
    net::write_all(socket.fd(), answer.data(), answer.size(), net::deadline_after(kFrameTimeout), reader.peer());
    if (status == HelloStatus::WrongVersion)
      throw Error(fmt::format("rank {} speaks event protocol version {}, this controller {}",
                              hello.rank, hello.version, event_codec::kVersion));
    if (status == HelloStatus::WrongToken)
      throw Error(fmt::format("rank {} presented a wrong token", hello.rank));
    return hello.rank;
  }

  // Hands every event to the sink in arrival order. Counters are published once per burst of
  // buffered frames rather than per event, to keep the lock out of the per-event path.
  // The frames of one read (a worker's batch) go to the sink together, after the last of them.
  // Taken out of `burst` first: a sink that throws (out of memory) is not handed them again.
  void receive(net::FrameReader& reader, int rank) {
    std::vector<Event> burst, handed;
    auto hand_on = [&] {
      handed.clear();
      handed.swap(burst);
      const uint64_t n = handed.size();
      if (n > 0) sink->emit_all(handed);  // leaves it empty
      count(rank, n);
    };
    try {
      while (true) {
        if (!reader.frame_buffered()) hand_on();
        const auto frame = reader.next(net::kNoDeadline, kFrameTimeout);
        if (!frame) break;
        burst.push_back(event_codec::decode_body(*frame));
      }
    } catch (...) {
      hand_on();
      throw;
    }
    hand_on();
  }
};

EventServer::EventServer(const std::string& host, uint16_t port, std::string token, EventSink& sink)
    : impl_(std::make_unique<Impl>()) {
  impl_->token = std::move(token);
  impl_->sink = &sink;
  Impl* impl = impl_.get();
  impl_->server = std::make_unique<net::TcpServer>(
      host, port, [impl](net::Socket& s, const std::string& peer) { impl->serve(s, peer); },
      [impl](const std::string& message) { impl->record_error(message); });
}

EventServer::~EventServer() { stop(); }

uint16_t EventServer::port() const { return impl_->server->port(); }
void EventServer::stop() { impl_->server->stop(); }

std::vector<std::string> EventServer::errors() const {
  std::lock_guard lock(impl_->mutex);
  std::vector<std::string> all(impl_->errors.begin(), impl_->errors.end());
  if (std::string cut = impl_->hello_gate.summary(); !cut.empty()) all.push_back(std::move(cut));
  return all;
}

std::map<int, uint64_t> EventServer::received_per_rank() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->per_rank;
}

uint64_t EventServer::received() const { return impl_->total.load(); }
std::string EventServer::limit_failure() const { return impl_->server->limit_failure(); }
size_t EventServer::open_connections() const { return impl_->server->open_connections(); }

bool EventServer::wait_drained(std::chrono::milliseconds timeout) const {
  return impl_->server->wait_no_connections(timeout);
}

}  // namespace ringlab

// The event stream end to end on 127.0.0.1: clients on threads play the workers, an EventStore
// plays the controller. Every event arrives, in each rank's order; bad connections are refused
// and recorded without disturbing the good ones.
#include <doctest/doctest.h>

#include <algorithm>
#include <poll.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/core/clock.h"
#include "engine/core/error.h"
#include "engine/net/framing.h"
#include "engine/net/socket.h"
#include "engine/net/wire.h"
#include "engine/net/event_client.h"
#include "engine/net/event_codec.h"
#include "engine/net/event_server.h"
#include "engine/events/event_store.h"

using namespace ringlab;
using namespace std::chrono_literals;

namespace {

const std::string kHost = "127.0.0.1";
const std::string kToken = "run-token-42";

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

EventClientOptions client_options(uint16_t port, int rank) {
  EventClientOptions o;
  o.host = kHost;
  o.port = port;
  o.token = kToken;
  o.rank = rank;
  o.timeout = 20000ms;
  return o;
}

Event numbered(int rank, int64_t i) {
  Event e;
  e.kind = i % 3 == 0 ? EventKind::ChunkTransfer : EventKind::StepEnd;
  e.rank = rank;
  e.step = i;
  e.value = static_cast<double>(i) * 0.5;
  if (i % 100 == 0) {
    e.values = {static_cast<float>(i), 1.0f, 2.0f};
    e.text = "event " + std::to_string(i);
  }
  return e;
}

// Bounded wait for a condition the server reaches on its own threads.
template <class Predicate>
bool eventually(Predicate done) {
  const auto deadline = net::deadline_after(10000ms);
  while (!done()) {
    if (net::Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(2ms);
  }
  return true;
}

void send_raw(const net::Socket& s, const std::vector<uint8_t>& bytes) {
  net::write_all(s.fd(), bytes.data(), bytes.size(), net::deadline_after(5000ms), "test");
}

// Connects and completes a valid handshake by hand; the server's answer (0, then its clock) is read.
net::Socket raw_client(uint16_t port, int rank) {
  net::Socket s = net::connect_tcp(kHost, port, 5000ms);
  std::vector<uint8_t> hello;
  event_codec::encode_hello({event_codec::kVersion, kToken, rank}, hello);
  const int64_t sent = now_ns();
  send_raw(s, hello);
  uint8_t answer[9] = {0xff};
  REQUIRE(net::read_exact(s.fd(), answer, 9, net::deadline_after(5000ms), "test") == net::ReadStatus::Complete);
  REQUIRE(answer[0] == 0);
  wire::Reader clock({answer + 1, 8}, "clock");
  const int64_t server_clock = clock.i64();
  CHECK(server_clock >= sent);  // one machine, one steady clock
  CHECK(server_clock <= now_ns());
  return s;
}

}  // namespace

TEST_CASE("N clients x M events all arrive, each rank's in order") {
  EventStore store;
  EventServer server(kHost, 0, kToken, store);
  REQUIRE(server.port() != 0);
  constexpr int kRanks = 4;
  constexpr int kEvents = 20000;
  std::vector<std::thread> workers;
  std::atomic<int> failures{0};
  for (int rank = 0; rank < kRanks; ++rank)
    workers.emplace_back([&, rank] {
      try {
        EventClient client(client_options(server.port(), rank));
        for (int64_t i = 0; i < kEvents; ++i) client.emit(numbered(rank, i));
        client.close();
        if (client.sent() != kEvents) ++failures;
      } catch (const std::exception& e) {
        MESSAGE(std::string(e.what()));
        ++failures;
      }
    });
  for (auto& w : workers) w.join();
  REQUIRE(failures.load() == 0);
  REQUIRE(server.wait_drained(10000ms));

  CHECK(store.size() == kRanks * kEvents);
  CHECK(server.received() == kRanks * kEvents);
  const auto per_rank = server.received_per_rank();
  for (int rank = 0; rank < kRanks; ++rank) CHECK(per_rank.at(rank) == kEvents);
  std::vector<int64_t> next(kRanks, 0);
  store.for_each(0, [&](const Event& e) {
    const auto r = static_cast<size_t>(e.rank);
    REQUIRE(e.step == next[r]);  // order kept per rank
    CHECK(e.value == static_cast<double>(e.step) * 0.5);
    if (e.step % 100 == 0) {
      CHECK(e.text == "event " + std::to_string(e.step));
      CHECK(e.values == std::vector<float>{static_cast<float>(e.step), 1.0f, 2.0f});
    }
    ++next[r];
  });
  for (int rank = 0; rank < kRanks; ++rank) CHECK(next[static_cast<size_t>(rank)] == kEvents);
  CHECK(server.errors().empty());
}

TEST_CASE("a tiny queue blocks the producer briefly but loses nothing") {
  EventStore store;
  EventServer server(kHost, 0, kToken, store);
  EventClientOptions options = client_options(server.port(), 1);
  options.queue_capacity = 4;
  {
    EventClient client(options);
    for (int64_t i = 0; i < 3000; ++i) client.emit(numbered(1, i));
    client.flush();
    CHECK(client.sent() == 3000);
  }  // the destructor closes
  REQUIRE(server.wait_drained(10000ms));
  CHECK(store.size() == 3000);
  CHECK(server.received_per_rank().at(1) == 3000);
}

TEST_CASE("flush makes events visible while the connection stays open") {
  EventStore store;
  EventServer server(kHost, 0, kToken, store);
  EventClient client(client_options(server.port(), 0));
  CHECK(client.wants_chunks());
  client.set_wants_chunks(false);
  CHECK_FALSE(client.wants_chunks());
  for (int64_t i = 0; i < 10; ++i) client.emit(numbered(0, i));
  client.flush(10000ms);
  CHECK(client.sent() == 10);
  CHECK(eventually([&] { return store.size() == 10; }));
  CHECK(server.open_connections() == 1);
}

TEST_CASE("a wrong token is refused, recorded, and the server keeps serving") {
  EventStore store;
  EventServer server(kHost, 0, kToken, store);
  EventClientOptions bad = client_options(server.port(), 7);
  bad.token = "guess";
  try {
    EventClient client(bad);
    FAIL("a wrong token must be refused");
  } catch (const Error& e) {
    CHECK(contains(e.what(), "event server at 127.0.0.1:" + std::to_string(server.port()) + " refused the token"));
    CHECK(contains(e.what(), "rank 7"));
  }
  REQUIRE(eventually([&] { return !server.errors().empty(); }));
  CHECK(contains(server.errors().back(), "wrong token"));
  CHECK(contains(server.errors().back(), "rank 7"));

  EventClient good(client_options(server.port(), 0));
  good.emit(numbered(0, 1));
  good.close();
  REQUIRE(server.wait_drained(10000ms));
  CHECK(store.size() == 1);
}

TEST_CASE("bad frames close only their own connection") {
  EventStore store;
  EventServer server(kHost, 0, kToken, store);
  EventClient good(client_options(server.port(), 0));
  good.emit(numbered(0, 0));
  good.flush();

  SUBCASE("an event of unknown kind") {
    net::Socket raw = raw_client(server.port(), 3);
    std::vector<uint8_t> frame;
    event_codec::encode(numbered(3, 1), frame);
    frame[4] = 99;  // the kind byte
    send_raw(raw, frame);
    REQUIRE(eventually([&] { return !server.errors().empty(); }));
    CHECK(contains(server.errors().back(), "unknown kind 99"));
    CHECK(contains(server.errors().back(), "rank 3"));
  }
  SUBCASE("a frame over the size limit") {
    net::Socket raw = raw_client(server.port(), 3);
    send_raw(raw, {0xff, 0xff, 0xff, 0xff});
    REQUIRE(eventually([&] { return !server.errors().empty(); }));
    CHECK(contains(server.errors().back(), "more than the limit"));
  }
  SUBCASE("garbage instead of a hello") {
    net::Socket raw = net::connect_tcp(kHost, server.port(), 5000ms);
    send_raw(raw, {12, 0, 0, 0, 'n', 'o', 't', ' ', 'a', ' ', 'h', 'e', 'l', 'l', 'o', '!'});
    REQUIRE(eventually([&] { return !server.errors().empty(); }));
    CHECK(contains(server.errors().back(), "magic"));
  }
  SUBCASE("another protocol version") {
    net::Socket raw = net::connect_tcp(kHost, server.port(), 5000ms);
    std::vector<uint8_t> hello;
    event_codec::encode_hello({static_cast<uint16_t>(event_codec::kVersion + 1), kToken, 2}, hello);
    send_raw(raw, hello);
    uint8_t answer = 0;
    REQUIRE(net::read_exact(raw.fd(), &answer, 1, net::deadline_after(5000ms), "test") == net::ReadStatus::Complete);
    CHECK(answer == 2);
    REQUIRE(eventually([&] { return !server.errors().empty(); }));
    CHECK(contains(server.errors().back(), "version"));
  }
  SUBCASE("good events, then a connection cut mid-frame") {
    {
      net::Socket raw = raw_client(server.port(), 5);
      std::vector<uint8_t> frames;
      event_codec::encode(numbered(5, 0), frames);
      event_codec::encode(numbered(5, 1), frames);
      frames.resize(frames.size() - 3);  // the second one never completes
      send_raw(raw, frames);
    }
    REQUIRE(eventually([&] { return !server.errors().empty(); }));
    CHECK(contains(server.errors().back(), "middle of a frame"));
    CHECK(eventually([&] { return server.received_per_rank().count(5) == 1; }));
    CHECK(server.received_per_rank().at(5) == 1);  // the complete one still counted
  }

  // The good connection is untouched.
  good.emit(numbered(0, 1));
  good.close();
  REQUIRE(server.wait_drained(10000ms));
  CHECK(server.received_per_rank().at(0) == 2);
}

namespace {

// A fake controller that accepts one client's hello, then either never reads again (a suspended
// controller) or closes the connection (a dead one).
class FakeController {
 public:
  explicit FakeController(bool close_after_hello) : listener_(net::listen_tcp(kHost, 0)) {
    thread_ = std::thread([this, close_after_hello] {
      net::wait_ready(listener_.fd(), POLLIN, net::deadline_after(10000ms));
      net::Socket s = net::accept_tcp(listener_);
      if (!s.valid()) return;
      net::FrameReader reader(s.fd(), event_codec::kMaxFrameBytes, "client");
      if (!reader.next(net::deadline_after(5000ms), 5000ms)) return;
      std::vector<uint8_t> ok;
      wire::Writer(ok).u8(0);
      wire::Writer(ok).i64(now_ns());
      net::write_all(s.fd(), ok.data(), ok.size(), net::deadline_after(5000ms), "client");
      if (close_after_hello) return;
      std::unique_lock lock(mutex_);
      release_.wait_for(lock, 60s, [&] { return finished_; });
    });
  }
  ~FakeController() {
    {
      std::lock_guard lock(mutex_);
      finished_ = true;
    }
    release_.notify_all();
    thread_.join();
  }
  uint16_t port() const { return net::local_port(listener_); }

 private:
  net::Socket listener_;
  std::mutex mutex_;
  std::condition_variable release_;
  bool finished_ = false;
  std::thread thread_;
};

// Emits events of a MiB each (the socket buffers fill after a few) until emit throws.
std::string emit_until_it_throws(EventClient& client) {
  Event big;
  big.text.assign(1 << 20, 'x');
  try {
    for (int i = 0; i < 10000; ++i) client.emit(big);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a controller that stops reading is waited for up to its patience, not the run's timeout") {
  FakeController suspended(false);
  EventClientOptions options = client_options(suspended.port(), 0);
  options.timeout = 100ms;               // what a peer would get
  options.controller_patience = 1500ms;  // what the controller gets
  options.queue_capacity = 8;
  const auto start = net::Clock::now();
  EventClient client(options);
  std::atomic<bool> done{false}, saw_behind{false};
  std::thread watch([&] {
    while (!done && !saw_behind) {
      saw_behind = client.behind(50ms);
      std::this_thread::sleep_for(5ms);
    }
  });
  const std::string error = emit_until_it_throws(client);
  done = true;
  watch.join();
  MESSAGE(error);
  CHECK(net::Clock::now() - start >= 1500ms);
  CHECK(contains(error, "the controller has not read any event for 1500 ms"));
  CHECK(contains(error, "is it suspended (Ctrl-Z, SIGSTOP)?"));
  CHECK(saw_behind);
  CHECK_THROWS_AS(client.flush(100ms), Error);
}

TEST_CASE("a controller that closes the connection fails the client at once, however patient") {
  FakeController dead(true);
  EventClientOptions options = client_options(dead.port(), 0);
  options.controller_patience = 600000ms;
  const auto start = net::Clock::now();
  EventClient client(options);
  const std::string error = emit_until_it_throws(client);
  MESSAGE(error);
  CHECK(!error.empty());
  CHECK(!contains(error, "suspended"));
  CHECK(net::Clock::now() - start < 60s);  // a hang guard: the patience is ten minutes
}

TEST_CASE("stop() ends open connections and joins, and the server's port can be reused") {
  EventStore store;
  auto server = std::make_unique<EventServer>(kHost, 0, kToken, store);
  const uint16_t port = server->port();
  net::Socket idle = raw_client(port, 0);  // connected and silent
  REQUIRE(eventually([&] { return server->open_connections() == 1; }));
  server->stop();
  CHECK(server->open_connections() == 0);
  server.reset();
  EventServer again(kHost, port, kToken, store);  // SO_REUSEADDR
  CHECK(again.port() == port);
}

TEST_CASE("connections cut off by newer ones before their hello are counted in one line of the server's errors") {
  EventStore store;
  EventServer server(kHost, 0, kToken, store);
  std::vector<net::Socket> silent;
  // The six oldest have sent half a frame header, which the server has read by the time they are
  // cut off: their ends read as "closed in the middle of a frame", which must not be blamed on them.
  for (int i = 0; i < 6; ++i) {
    silent.push_back(net::connect_tcp(kHost, server.port(), 5000ms));
    send_raw(silent.back(), {0x10, 0x00});
  }
  std::this_thread::sleep_for(200ms);
  for (int i = 6; i < 70; ++i) silent.push_back(net::connect_tcp(kHost, server.port(), 5000ms));
  // 64 may wait for their hello at once: the six oldest make room for the newest. (Read before
  // the others' 3 s hello timeout, which adds a line each.)
  const std::string expected = "6 connection(s) cut off before their hello: 64 newer ones were waiting for theirs";
  CHECK(eventually([&] {
    const std::vector<std::string> errors = server.errors();
    return std::count(errors.begin(), errors.end(), expected) == 1;
  }));
  for (const std::string& e : server.errors()) CHECK(e.find("middle of a frame") == std::string::npos);
  silent.clear();
  CHECK(eventually([&] { return server.open_connections() == 0; }));
}

// The rendezvous store: every operation against a real server on 127.0.0.1, clients on threads,
// and the ways a connection can be wrong (token, oversized or garbage frames), none of which may
// take the server down.
#include <doctest/doctest.h>
#include <poll.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "engine/core/error.h"
#include "engine/net/framing.h"
#include "engine/net/socket.h"
#include "engine/net/store.h"
#include "engine/net/wire.h"

using namespace ringlab;
using namespace std::chrono_literals;

namespace {

const std::string kHost = "127.0.0.1";
const std::string kToken = "s3cret-token";

std::vector<uint8_t> bytes_of(const std::string& s) { return {s.begin(), s.end()}; }
std::string text_of(const std::vector<uint8_t>& b) { return {b.begin(), b.end()}; }

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// True when the server closes (or resets) the connection within a few seconds.
bool closed_by_peer(const net::Socket& s) {
  const auto deadline = net::deadline_after(5000ms);
  uint8_t buf[256];
  while (net::Clock::now() < deadline) {
    try {
      const ssize_t n = net::read_some(s.fd(), buf, sizeof buf, "test");
      if (n == 0) return true;
      if (n < 0) net::wait_ready(s.fd(), POLLIN, deadline);
    } catch (const Error&) {
      return true;  // connection reset
    }
  }
  return false;
}

void send_raw(const net::Socket& s, const std::vector<uint8_t>& bytes) {
  net::write_all(s.fd(), bytes.data(), bytes.size(), net::deadline_after(5000ms), "test");
}

// A valid hello frame, as the store's protocol spells it.
std::vector<uint8_t> hello_frame(const std::string& token) {
  std::vector<uint8_t> frame;
  const size_t start = net::begin_frame(frame);
  wire::Writer w(frame);
  w.u32(0x54534c52);  // "RLST"
  w.u16(1);
  w.string(token);
  net::end_frame(frame, start);
  return frame;
}

// Waits (bounded) until the server has recorded at least one connection error.
std::vector<std::string> wait_for_errors(const StoreServer& server) {
  const auto deadline = net::deadline_after(5000ms);
  while (server.errors().empty() && net::Clock::now() < deadline) std::this_thread::sleep_for(5ms);
  return server.errors();
}

}  // namespace

TEST_CASE("set, get, add, check and wait on one client") {
  StoreServer server(kHost, 0, kToken);
  REQUIRE(server.port() != 0);
  StoreClient client(kHost, server.port(), kToken, 5000ms);

  client.set("greeting", bytes_of("hello"));
  CHECK(text_of(client.get("greeting")) == "hello");

  const std::vector<uint8_t> binary = {0, 255, 1, 0, 128};
  client.set("binary", binary);
  CHECK(client.get("binary") == binary);
  client.set("empty", {});
  CHECK(client.get("empty").empty());

  client.set("greeting", bytes_of("replaced"));
  CHECK(text_of(client.get("greeting")) == "replaced");

  CHECK(client.add("counter", 1) == 1);
  CHECK(client.add("counter", 5) == 6);
  CHECK(client.add("counter", -10) == -4);
  CHECK(text_of(client.get("counter")) == "-4");  // counters are decimal text, like TCPStore's

  CHECK(client.check({"greeting", "counter"}));
  CHECK_FALSE(client.check({"greeting", "absent"}));
  CHECK(client.check({}));

  client.wait({"greeting", "counter"});  // already there: returns at once
  CHECK(client.timeout() == 5000ms);
}

TEST_CASE("add refuses a value that is not an integer and the connection stays usable") {
  StoreServer server(kHost, 0, kToken);
  StoreClient client(kHost, server.port(), kToken, 5000ms);
  client.set("word", bytes_of("forty-two"));
  try {
    client.add("word", 1);
    FAIL("add on a non-integer must throw");
  } catch (const Error& e) {
    CHECK(contains(e.what(), "'word'"));
    CHECK(contains(e.what(), "not an integer"));
  }
  CHECK(client.add("number", 2) == 2);
}

TEST_CASE("get and wait block until another client sets the key") {
  StoreServer server(kHost, 0, kToken);
  StoreClient waiter(kHost, server.port(), kToken, 10000ms);
  std::thread setter([port = server.port()] {
    StoreClient client(kHost, port, kToken, 10000ms);
    std::this_thread::sleep_for(50ms);
    client.set("late/a", bytes_of("A"));
    client.set("late/b", bytes_of("B"));
  });
  CHECK(text_of(waiter.get("late/a")) == "A");
  waiter.wait({"late/a", "late/b"});
  CHECK(text_of(waiter.get("late/b")) == "B");
  setter.join();
}

TEST_CASE("concurrent clients on threads: atomic add and a rendezvous of every rank") {
  StoreServer server(kHost, 0, kToken);
  constexpr int kClients = 8;
  constexpr int kAdds = 50;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int rank = 0; rank < kClients; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        StoreClient client(kHost, server.port(), kToken, 20000ms);
        for (int i = 0; i < kAdds; ++i) client.add("counter", 1);
        client.set("rank/" + std::to_string(rank), bytes_of(std::to_string(rank * 10)));
        std::vector<std::string> everyone;
        for (int r = 0; r < kClients; ++r) everyone.push_back("rank/" + std::to_string(r));
        client.wait(everyone);
        for (int r = 0; r < kClients; ++r)
          if (text_of(client.get("rank/" + std::to_string(r))) != std::to_string(r * 10)) ++failures;
      } catch (const std::exception& e) {
        MESSAGE(std::string(e.what()));
        ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(failures.load() == 0);
  StoreClient reader(kHost, server.port(), kToken, 5000ms);
  CHECK(reader.add("counter", 0) == kClients * kAdds);
}

TEST_CASE("one client shared by several threads: requests take turns") {
  StoreServer server(kHost, 0, kToken);
  StoreClient client(kHost, server.port(), kToken, 10000ms);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 100; ++i) client.add("shared", 1);
    });
  for (auto& t : threads) t.join();
  CHECK(client.add("shared", 0) == 400);
}

TEST_CASE("a wrong token is refused with a clear error and recorded by the server") {
  StoreServer server(kHost, 0, kToken);
  try {
    StoreClient intruder(kHost, server.port(), "not-the-token", 5000ms);
    FAIL("a wrong token must be refused");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) == "store at 127.0.0.1:" + std::to_string(server.port()) + " refused the token");
  }
  const auto errors = wait_for_errors(server);
  REQUIRE(!errors.empty());
  CHECK(contains(errors.back(), "wrong token"));
  // The right token still gets in.
  StoreClient client(kHost, server.port(), kToken, 5000ms);
  client.set("k", bytes_of("v"));
  CHECK(text_of(client.get("k")) == "v");
}

TEST_CASE("get and wait time out naming the key") {
  StoreServer server(kHost, 0, kToken);
  StoreClient client(kHost, server.port(), kToken, 200ms);
  try {
    client.get("never/set");
    FAIL("get of a missing key must time out");
  } catch (const TimeoutError& e) {
    CHECK(contains(e.what(), "'never/set'"));
    CHECK(contains(e.what(), "store.get"));
    CHECK(contains(e.what(), "200 ms"));
  }
  client.set("present", bytes_of("x"));
  try {
    client.wait({"present", "absent/key"}, 100ms);
    FAIL("wait on a missing key must time out");
  } catch (const TimeoutError& e) {
    CHECK(contains(e.what(), "'absent/key'"));
  }
  // A timeout is an answer from the server: the connection is still good.
  CHECK(text_of(client.get("present")) == "x");
}

TEST_CASE("an oversized frame closes only that connection") {
  StoreServer server(kHost, 0, kToken);
  StoreClient good(kHost, server.port(), kToken, 5000ms);
  good.set("before", bytes_of("1"));

  net::Socket raw = net::connect_tcp(kHost, server.port(), 5000ms);
  send_raw(raw, {0xff, 0xff, 0xff, 0x7f});  // announces a 2 GiB frame
  CHECK(closed_by_peer(raw));
  const auto errors = wait_for_errors(server);
  REQUIRE(!errors.empty());
  CHECK(contains(errors.back(), "more than the limit"));

  good.set("after", bytes_of("2"));
  CHECK(text_of(good.get("before")) == "1");
  StoreClient fresh(kHost, server.port(), kToken, 5000ms);
  CHECK(text_of(fresh.get("after")) == "2");
}

TEST_CASE("garbage before or after the hello closes only that connection") {
  StoreServer server(kHost, 0, kToken);
  StoreClient good(kHost, server.port(), kToken, 5000ms);

  SUBCASE("random bytes instead of a hello") {
    net::Socket raw = net::connect_tcp(kHost, server.port(), 5000ms);
    send_raw(raw, {8, 0, 0, 0, 'G', 'E', 'T', ' ', '/', ' ', 'H', 'T'});
    CHECK(closed_by_peer(raw));
    CHECK(contains(wait_for_errors(server).back(), "magic"));
  }
  SUBCASE("a hello that is cut short") {
    net::Socket raw = net::connect_tcp(kHost, server.port(), 5000ms);
    send_raw(raw, {3, 0, 0, 0, 'R', 'L', 'S'});
    CHECK(closed_by_peer(raw));
    CHECK(contains(wait_for_errors(server).back(), "truncated"));
  }
  SUBCASE("an unknown operation after a good hello") {
    net::Socket raw = net::connect_tcp(kHost, server.port(), 5000ms);
    send_raw(raw, hello_frame(kToken));
    send_raw(raw, {2, 0, 0, 0, 0x77, 0x01});
    CHECK(closed_by_peer(raw));
    CHECK(contains(wait_for_errors(server).back(), "unknown store operation"));
  }
  SUBCASE("a key length that runs past the frame") {
    net::Socket raw = net::connect_tcp(kHost, server.port(), 5000ms);
    send_raw(raw, hello_frame(kToken));
    send_raw(raw, {6, 0, 0, 0, 2 /* Get */, 0xff, 0x0f, 0, 0, 'k'});
    CHECK(closed_by_peer(raw));
    CHECK(!wait_for_errors(server).empty());
  }
  SUBCASE("a peer that hangs up in the middle of a frame") {
    {
      net::Socket raw = net::connect_tcp(kHost, server.port(), 5000ms);
      send_raw(raw, hello_frame(kToken));
      uint8_t answer[5];  // read it, or closing with unread data resets the connection instead
      REQUIRE(net::read_exact(raw.fd(), answer, sizeof answer, net::deadline_after(5000ms), "test") ==
              net::ReadStatus::Complete);
      CHECK(answer[4] == 0);  // accepted
      send_raw(raw, {100, 0, 0, 0, 1, 2, 3});
    }
    CHECK(contains(wait_for_errors(server).back(), "middle of a frame"));
  }
  good.set("still", bytes_of("serving"));
  CHECK(text_of(good.get("still")) == "serving");
}

TEST_CASE("stop() wakes a client blocked in get with an error instead of leaving it waiting") {
  auto server = std::make_unique<StoreServer>(kHost, 0, kToken);
  StoreClient client(kHost, server->port(), kToken, 60000ms);
  std::atomic<bool> got_error{false};
  std::thread waiter([&] {
    try {
      client.get("never");
    } catch (const Error&) {
      got_error = true;
    }
  });
  std::this_thread::sleep_for(50ms);  // let the get reach the server (the result holds either way)
  server->stop();
  waiter.join();
  CHECK(got_error.load());
  server.reset();  // stop() twice (destructor) is fine
}

TEST_CASE("connect errors name host:port") {
  uint16_t port = 0;
  {
    StoreServer probe(kHost, 0, kToken);
    port = probe.port();
  }  // now nothing listens there
  try {
    StoreClient client(kHost, port, kToken, 300ms);
    FAIL("nothing listens there");
  } catch (const TimeoutError& e) {
    CHECK(contains(e.what(), "cannot reach 127.0.0.1:" + std::to_string(port) + " within 300 ms"));
  }

  StoreServer server(kHost, 0, kToken);
  try {
    StoreServer second(kHost, server.port(), kToken);
    FAIL("the port is taken");
  } catch (const Error& e) {
    CHECK(contains(e.what(), "cannot bind 127.0.0.1:" + std::to_string(server.port())));
    CHECK(contains(e.what(), "in use"));
  }
}

TEST_CASE("another program on the store's port is named for what it does, not as a frame size or a store that is down") {
  // A wrong --master-port: a listener that answers with its own bytes (an SSH banner), and one
  // that takes the connection and says nothing (an HTTP server waiting for a request line).
  for (const bool banner : {true, false}) {
    CAPTURE(banner);
    net::Socket listener = net::listen_tcp(kHost, 0);
    std::atomic<bool> done{false};
    std::thread other([&] {
      net::wait_ready(listener.fd(), POLLIN, net::deadline_after(10000ms));
      net::Socket s = net::accept_tcp(listener);
      if (!s.valid()) return;
      const std::string text = "SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n";
      if (banner) send_raw(s, std::vector<uint8_t>(text.begin(), text.end()));
      while (!done) std::this_thread::sleep_for(10ms);
    });
    const std::string where = "127.0.0.1:" + std::to_string(net::local_port(listener));
    try {
      StoreClient client(kHost, net::local_port(listener), kToken, 500ms);
      FAIL("a client was made with a program that is not a store");
    } catch (const StoreHelloUnanswered& e) {
      CHECK_FALSE(banner);
      CHECK(std::string(e.what()) == where + " took the connection but did not answer the store's hello within 500 ms");
    } catch (const Error& e) {
      CHECK(banner);
      CHECK(contains(e.what(), where + " is not a ringlab store: it answered the store's hello with bytes a store never sends"));
      CHECK_FALSE(contains(e.what(), "frame of"));
    }
    done = true;
    other.join();
  }
}

TEST_CASE("tokens_equal compares whole strings") {
  CHECK(net::tokens_equal("abc", "abc"));
  CHECK(net::tokens_equal("", ""));
  CHECK_FALSE(net::tokens_equal("abc", "abd"));
  CHECK_FALSE(net::tokens_equal("abc", "ab"));
  CHECK_FALSE(net::tokens_equal("ab", "abc"));
  CHECK_FALSE(net::tokens_equal(std::string("a\0b", 3), "a"));
}

TEST_CASE("a store that stops answering is waited for up to the client's patience, and named") {
  // A fake store that accepts the hello and then never answers (its process suspended).
  net::Socket listener = net::listen_tcp(kHost, 0);
  std::atomic<bool> done{false};
  std::thread fake([&] {
    net::wait_ready(listener.fd(), POLLIN, net::deadline_after(10000ms));
    net::Socket s = net::accept_tcp(listener);
    if (!s.valid()) return;
    net::FrameReader reader(s.fd(), 1 << 20, "client");
    if (!reader.next(net::deadline_after(5000ms), 5000ms)) return;
    std::vector<uint8_t> accepted;
    const size_t start = net::begin_frame(accepted);
    accepted.push_back(0);
    net::end_frame(accepted, start);
    send_raw(s, accepted);
    while (!done) std::this_thread::sleep_for(10ms);
  });
  {
    StoreClient client(kHost, net::local_port(listener), kToken, 100ms, 1200ms);
    const auto start = net::Clock::now();
    try {
      client.check({"ringlab/stop"});
      FAIL("check() returned without an answer");
    } catch (const TimeoutError& e) {
      MESSAGE(std::string(e.what()));
      CHECK(net::Clock::now() - start >= 1200ms);  // not the 100 ms a missing key gets
      CHECK(contains(e.what(), "did not answer within 1200 ms: is the process that hosts it suspended"));
    }
  }
  done = true;
  fake.join();
}

#include "engine/net/store.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <span>
#include <unordered_map>

#include <fmt/core.h>

#include "engine/core/error.h"
#include "engine/core/thread_name.h"
#include "engine/net/framing.h"
#include "engine/net/hello_gate.h"
#include "engine/net/socket.h"
#include "engine/net/tcp_server.h"
#include "engine/net/wire.h"

// The wire protocol, version 1. Every message is a frame (u32 length, body), little-endian.
//   client hello:  u32 magic "RLST", u16 version, string token
//   server answer: u8 HelloStatus; the server closes the connection unless it is Accepted
//   requests:      u8 Op, then
//     Set   string key, bytes value             -> Ok
//     Get   string key, u32 timeout_ms          -> Ok bytes value | Timeout | Stopping
//     Add   string key, i64 delta               -> Ok i64 new_value | BadRequest string why
//     Wait  u32 n, n x string key, u32 timeout_ms -> Ok | Timeout string missing_key | Stopping
//     Check u32 n, n x string key               -> Ok u8 all_present
// (string and bytes: u32 length, then the bytes.) Get and Wait block on the server, which answers
// Timeout once the client's timeout has passed, so a waiting client sends nothing while it waits.
// A malformed or oversized frame closes that connection only.

namespace ringlab {
namespace {

constexpr uint32_t kStoreMagic = 0x54534c52;  // the bytes "RLST"
constexpr uint16_t kStoreVersion = 1;
constexpr size_t kMaxFrameBytes = 16 * 1024 * 1024;
constexpr size_t kMaxKeyBytes = 4096;
constexpr size_t kMaxTokenBytes = 4096;
constexpr size_t kMaxKeysPerRequest = 65536;
constexpr size_t kMaxErrorsKept = 100;
// A client says hello as soon as it connects; one that stays silent is closed quickly.
constexpr std::chrono::milliseconds kHelloTimeout(3'000);
constexpr size_t kMaxConnectionsBeforeHello = 64;
// The server's own bound on a blocking Get or Wait, whatever the client asks (the longest
// --timeout a run can have); it also checks every second that the client is still there.
constexpr std::chrono::milliseconds kMaxBlockingWait(86'400'000);
constexpr std::chrono::milliseconds kHangUpCheck(1'000);
constexpr std::chrono::milliseconds kFrameTimeout(30'000);

enum class Op : uint8_t { Set = 1, Get = 2, Add = 3, Wait = 4, Check = 5 };
enum class Status : uint8_t { Ok = 0, Timeout = 1, Stopping = 2, BadRequest = 3 };
enum class HelloStatus : uint8_t { Accepted = 0, WrongToken = 1, WrongVersion = 2 };

uint32_t to_wire_ms(std::chrono::milliseconds t) {
  return static_cast<uint32_t>(std::clamp<int64_t>(t.count(), 0, UINT32_MAX));
}

// add() keeps counters as decimal text, like torch's TCPStore, so get() of a counter reads "3".
std::optional<int64_t> parse_counter(const std::vector<uint8_t>& value) {
  int64_t parsed = 0;
  const char* begin = reinterpret_cast<const char*>(value.data());
  const char* end = begin + value.size();
  const auto [ptr, ec] = std::from_chars(begin, end, parsed);
  if (ec != std::errc() || ptr != end || value.empty()) return std::nullopt;
  return parsed;
}

std::vector<std::string> read_keys(wire::Reader& r) {
  const uint32_t count = r.u32();
  if (count > kMaxKeysPerRequest)
    throw Error(fmt::format("store request names {} keys, more than the limit of {}", count,
                            kMaxKeysPerRequest));
  std::vector<std::string> keys;
  for (uint32_t i = 0; i < count; ++i) keys.push_back(r.string(kMaxKeyBytes, "key"));
  return keys;
}

void write_keys(wire::Writer& w, const std::vector<std::string>& keys) {
  w.u32(static_cast<uint32_t>(keys.size()));
  for (const auto& key : keys) w.string(key);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Server

struct StoreServer::Impl {
  std::string token;
  std::string where;

  std::mutex data_mutex;
  std::condition_variable data_changed;
  std::unordered_map<std::string, std::vector<uint8_t>> data;
  bool stopping = false;  // guarded by data_mutex, so a waiting Get cannot miss it

  mutable std::mutex errors_mutex;
  std::deque<std::string> errors;

  net::HelloGate hello_gate{kMaxConnectionsBeforeHello};
  std::unique_ptr<net::TcpServer> server;  // started last: its threads use everything above

  void record_error(const std::string& message) {
    std::lock_guard lock(errors_mutex);
    errors.push_back(message);
    if (errors.size() > kMaxErrorsKept) errors.pop_front();
  }

  void stop() {
    {
      std::lock_guard lock(data_mutex);
      stopping = true;
    }
    data_changed.notify_all();
    if (server) server->stop();
  }

  void serve(net::Socket& socket, const std::string& peer) {
    name_this_thread("store conn");
    net::HelloGate::Pass pass(hello_gate, socket.fd());
    net::FrameReader reader(socket.fd(), kMaxFrameBytes, peer);
    try {
      if (!handshake(socket, reader, pass)) return;
    } catch (const Error&) {
      if (pass.cut_off()) return;  // the gate counts it (summary in errors())
      throw;
    }
    std::vector<uint8_t> reply;
    while (auto request = reader.next(net::kNoDeadline, kFrameTimeout)) {
      reply.clear();
      const size_t frame = net::begin_frame(reply);
      wire::Writer w(reply);
      answer(*request, w, socket.fd());
      net::end_frame(reply, frame);
      net::write_all(socket.fd(), reply.data(), reply.size(), net::deadline_after(kFrameTimeout), peer);
    }
  }

  // Reads the client's hello and answers it; true when the token was right.
  bool handshake(net::Socket& socket, net::FrameReader& reader, net::HelloGate::Pass& pass) {
    const auto hello = reader.next(net::deadline_after(kHelloTimeout), kFrameTimeout);
    // It has spoken: whatever the answer, it no longer counts as a silent connection.
    if (!hello || !pass.release()) return false;
    wire::Reader r(*hello, "store hello");
    if (r.u32() != kStoreMagic) throw Error("not a ringlab store client (wrong magic number)");
    const uint16_t version = r.u16();
    const std::string offered = r.string(kMaxTokenBytes, "token");
    r.expect_end();
    HelloStatus status = HelloStatus::Accepted;
    if (version != kStoreVersion) status = HelloStatus::WrongVersion;
    else if (!net::tokens_equal(offered, token)) status = HelloStatus::WrongToken;
    std::vector<uint8_t> out;
    const size_t frame = net::begin_frame(out);
    out.push_back(static_cast<uint8_t>(status));
    net::end_frame(out, frame);
    net::write_all(socket.fd(), out.data(), out.size(), net::deadline_after(kFrameTimeout), reader.peer());
    if (status == HelloStatus::WrongVersion)
      throw Error(fmt::format("store protocol version {} refused (this server speaks {})", version,
                              kStoreVersion));
    if (status == HelloStatus::WrongToken) throw Error("wrong token, connection refused");
    return true;
  }

  // Blocks until ready() holds, the deadline passes or the store stops; a client that hangs up
  // meanwhile ends the wait (and its connection) instead of holding a thread until the deadline.
  template <class Ready>
  void wait_for_data(std::unique_lock<std::mutex>& lock, std::chrono::milliseconds timeout, int fd,
                     const std::string& what, Ready ready) {
    const auto deadline = net::deadline_after(std::min(timeout, kMaxBlockingWait));
    auto done = [&] { return stopping || ready(); };
    while (!done() && net::Clock::now() < deadline) {
      data_changed.wait_until(lock, std::min(deadline, net::deadline_after(kHangUpCheck)), done);
      if (!done() && net::peer_hung_up(fd)) throw Error(fmt::format("the client hung up while waiting for {}", what));
    }
  }

  void answer(std::span<const uint8_t> request, wire::Writer& w, int fd) {
    wire::Reader r(request, "store request");
    const uint8_t op = r.u8();
    switch (static_cast<Op>(op)) {
      case Op::Set: return answer_set(r, w);
      case Op::Get: return answer_get(r, w, fd);
      case Op::Add: return answer_add(r, w);
      case Op::Wait: return answer_wait(r, w, fd);
      case Op::Check: return answer_check(r, w);
    }
    throw Error(fmt::format("unknown store operation {}", op));
  }

  void answer_set(wire::Reader& r, wire::Writer& w) {
    std::string key = r.string(kMaxKeyBytes, "key");
    std::vector<uint8_t> value = r.bytes(kMaxFrameBytes, "value");
    r.expect_end();
    {
      std::lock_guard lock(data_mutex);
      data[std::move(key)] = std::move(value);
    }
    data_changed.notify_all();
    w.u8(static_cast<uint8_t>(Status::Ok));
  }

  void answer_get(wire::Reader& r, wire::Writer& w, int fd) {
    const std::string key = r.string(kMaxKeyBytes, "key");
    const std::chrono::milliseconds timeout(r.u32());
    r.expect_end();
    std::unique_lock lock(data_mutex);
    wait_for_data(lock, timeout, fd, fmt::format("key '{}'", key), [&] { return data.count(key) > 0; });
    const auto it = data.find(key);
    if (it != data.end()) {
      w.u8(static_cast<uint8_t>(Status::Ok));
      w.bytes(it->second);
    } else {
      w.u8(static_cast<uint8_t>(stopping ? Status::Stopping : Status::Timeout));
    }
  }

  void answer_add(wire::Reader& r, wire::Writer& w) {
    const std::string key = r.string(kMaxKeyBytes, "key");
    const int64_t delta = r.i64();
    r.expect_end();
    std::string failure;
    int64_t result = 0;
    {
      std::lock_guard lock(data_mutex);
      auto& value = data[key];
      const auto current = value.empty() ? std::optional<int64_t>(0) : parse_counter(value);
      if (!current) {
        failure = fmt::format("the value at key '{}' is not an integer", key);
      } else if (__builtin_add_overflow(*current, delta, &result)) {
        failure = fmt::format("adding {} to key '{}' ({}) overflows int64", delta, key, *current);
      } else {
        const std::string text = std::to_string(result);
        value.assign(text.begin(), text.end());
      }
    }
    if (!failure.empty()) {
      w.u8(static_cast<uint8_t>(Status::BadRequest));
      w.string(failure);
      return;
    }
    data_changed.notify_all();
    w.u8(static_cast<uint8_t>(Status::Ok));
    w.i64(result);
  }

  void answer_wait(wire::Reader& r, wire::Writer& w, int fd) {
    const std::vector<std::string> keys = read_keys(r);
    const std::chrono::milliseconds timeout(r.u32());
    r.expect_end();
    std::unique_lock lock(data_mutex);
    auto first_missing = [&]() -> const std::string* {
      for (const auto& key : keys)
        if (!data.count(key)) return &key;
      return nullptr;
    };
    wait_for_data(lock, timeout, fd, fmt::format("{} keys", keys.size()), [&] { return !first_missing(); });
    if (const std::string* missing = first_missing()) {
      w.u8(static_cast<uint8_t>(stopping ? Status::Stopping : Status::Timeout));
      w.string(*missing);
    } else {
      w.u8(static_cast<uint8_t>(Status::Ok));
    }
  }

  void answer_check(wire::Reader& r, wire::Writer& w) {
    const std::vector<std::string> keys = read_keys(r);
    r.expect_end();
    bool all = true;
    {
      std::lock_guard lock(data_mutex);
      for (const auto& key : keys) all = all && data.count(key) > 0;
    }
    w.u8(static_cast<uint8_t>(Status::Ok));
    w.u8(all ? 1 : 0);
  }
};

StoreServer::StoreServer(const std::string& host, uint16_t port, std::string token)
    : impl_(std::make_unique<Impl>()) {
  impl_->token = std::move(token);
  Impl* impl = impl_.get();
  impl_->server = std::make_unique<net::TcpServer>(
      host, port, [impl](net::Socket& s, const std::string& peer) { impl->serve(s, peer); },
      [impl](const std::string& message) { impl->record_error("store: " + message); });
  impl_->where = net::host_port(host, impl_->server->port());
}

StoreServer::~StoreServer() { impl_->stop(); }

uint16_t StoreServer::port() const { return impl_->server->port(); }

void StoreServer::stop() { impl_->stop(); }

std::vector<std::string> StoreServer::errors() const {
  std::lock_guard lock(impl_->errors_mutex);
  std::vector<std::string> all(impl_->errors.begin(), impl_->errors.end());
  if (std::string cut = impl_->hello_gate.summary(); !cut.empty()) all.push_back("store: " + std::move(cut));
  return all;
}

std::string StoreServer::limit_failure() const { return impl_->server->limit_failure(); }

// ---------------------------------------------------------------------------------------------
// Client

struct StoreClient::Impl {
  std::string where;
  std::chrono::milliseconds timeout;
  std::chrono::milliseconds patience;
  net::Socket socket;
  std::optional<net::FrameReader> reader;
  std::mutex mutex;  // one request at a time on the connection
  bool broken = false;
  std::vector<uint8_t> out;

  void check_key(const char* op, const std::string& key) const {
    if (key.size() > kMaxKeyBytes)
      throw Error(ErrorContext{-1, op, -1},
                  fmt::format("key of {} bytes is longer than the limit of {}", key.size(), kMaxKeyBytes));
  }

  void handshake(const std::string& token) {
    out.clear();
    const size_t frame = net::begin_frame(out);
    wire::Writer w(out);
    w.u32(kStoreMagic);
    w.u16(kStoreVersion);
    w.string(token);
    net::end_frame(out, frame);
    const auto deadline = net::deadline_after(timeout);
    net::write_all(socket.fd(), out.data(), out.size(), deadline, where);
    const auto reply = read_hello_answer(deadline);
    if (!reply) throw Error(fmt::format("store at {} closed the connection during the handshake", where));
    wire::Reader r(*reply, "store hello answer");
    const auto status = static_cast<HelloStatus>(r.u8());
    if (status == HelloStatus::WrongToken) throw TokenRefusedError(fmt::format("store at {} refused the token", where));
    if (status == HelloStatus::WrongVersion)
      throw Error(fmt::format("store at {} speaks another protocol version than {}", where, kStoreVersion));
    if (status != HelloStatus::Accepted || reply->size() != 1)
      throw Error(fmt::format("{} is not a ringlab store: it answered the store's hello with {} bytes a store never "
                              "sends (another program listens on that port?)", where, reply->size()));
  }

  // Another program on the port (a wrong --master-port) answers the hello with its own bytes,
  // or with nothing: each is said for what it is, not as a frame size or a store that is down.
  std::optional<std::span<const uint8_t>> read_hello_answer(std::chrono::steady_clock::time_point deadline) {
    try {
      return reader->next(deadline, timeout);
    } catch (const TimeoutError&) {
      throw StoreHelloUnanswered(fmt::format("{} took the connection but did not answer the store's hello within {}",
                                             where, net::describe_duration(timeout)));
    } catch (const PeerClosedError&) {
      throw;
    } catch (const Error&) {
      throw Error(fmt::format("{} is not a ringlab store: it answered the store's hello with bytes a store never "
                              "sends (another program listens on that port?)", where));
    }
  }

  // How long the answer to a request may take: what the server was asked to wait (a Get's or
  // a Wait's timeout; none for the others), then the client's patience with the server itself.
  std::chrono::milliseconds reply_wait(std::chrono::milliseconds held) const {
    if (held.count() == 0) return std::max(timeout, patience);
    return std::chrono::milliseconds(to_wire_ms(held)) + patience;
  }

  // Sends the request in `out` (a whole frame) and returns the answer's body. Any failure on
  // the connection leaves it in an unknown state, so the client refuses further requests.
  std::vector<uint8_t> round_trip(const char* op, std::chrono::milliseconds held = {}) {
    const ErrorContext ctx{-1, op, -1};
    if (broken) throw PeerClosedError(ctx, fmt::format("the connection to the store at {} was lost earlier", where));
    if (out.size() - net::kFrameHeaderBytes > kMaxFrameBytes)
      throw Error(ctx, fmt::format("request of {} bytes is larger than the store's limit of {}",
                                   out.size(), kMaxFrameBytes));
    try {
      const std::chrono::milliseconds wait = reply_wait(held);
      net::write_all(socket.fd(), out.data(), out.size(), net::deadline_after(wait), where);
      std::optional<std::span<const uint8_t>> reply;
      try {
        reply = reader->next(net::deadline_after(wait), wait);
      } catch (const TimeoutError&) {
        throw TimeoutError(fmt::format("the store at {} did not answer within {}: is the process that hosts it "
                                       "suspended (Ctrl-Z, SIGSTOP)?", where, net::describe_duration(wait)));
      }
      if (!reply) throw Error(fmt::format("the store at {} closed the connection", where));
      return {reply->begin(), reply->end()};
    } catch (const TimeoutError& e) {
      broken = true;
      throw TimeoutError(ctx, e.what());
    } catch (const Error& e) {
      broken = true;
      throw Error(ctx, e.what());
    }
  }

  // Starts a request frame in `out`; finish with net::end_frame(out, 0).
  wire::Writer begin_request(Op op) {
    out.clear();
    net::begin_frame(out);
    wire::Writer w(out);
    w.u8(static_cast<uint8_t>(op));
    return w;
  }

  [[noreturn]] void fail(const char* op, Status status, wire::Reader& r) {
    const ErrorContext ctx{-1, op, -1};
    if (status == Status::Stopping) throw Error(ctx, fmt::format("the store at {} is shutting down", where));
    if (status == Status::BadRequest) throw Error(ctx, r.string(kMaxFrameBytes, "message"));
    throw Error(ctx, fmt::format("the store at {} answered with unexpected code {}", where,
                                 static_cast<int>(status)));
  }
};

StoreClient::StoreClient(const std::string& host, uint16_t port, std::string token,
                         std::chrono::milliseconds timeout, std::chrono::milliseconds patience)
    : impl_(std::make_unique<Impl>()) {
  impl_->where = net::host_port(host, port);
  impl_->timeout = timeout;
  impl_->patience = patience;
  impl_->socket = net::connect_tcp(host, port, timeout);
  net::set_nodelay(impl_->socket);
  impl_->reader.emplace(impl_->socket.fd(), kMaxFrameBytes, impl_->where);
  impl_->handshake(token);
}

StoreClient::~StoreClient() = default;

std::chrono::milliseconds StoreClient::timeout() const { return impl_->timeout; }

void StoreClient::set(const std::string& key, const std::vector<uint8_t>& value) {
  std::lock_guard lock(impl_->mutex);
  impl_->check_key("store.set", key);
  wire::Writer w = impl_->begin_request(Op::Set);
  w.string(key);
  w.bytes(value);
  net::end_frame(impl_->out, 0);
  const auto reply = impl_->round_trip("store.set");
  wire::Reader r(reply, "store answer");
  const auto status = static_cast<Status>(r.u8());
  if (status != Status::Ok) impl_->fail("store.set", status, r);
}

std::vector<uint8_t> StoreClient::get(const std::string& key) {
  std::lock_guard lock(impl_->mutex);
  impl_->check_key("store.get", key);
  wire::Writer w = impl_->begin_request(Op::Get);
  w.string(key);
  w.u32(to_wire_ms(impl_->timeout));
  net::end_frame(impl_->out, 0);
  const auto reply = impl_->round_trip("store.get", impl_->timeout);
  wire::Reader r(reply, "store answer");
  const auto status = static_cast<Status>(r.u8());
  if (status == Status::Ok) return r.bytes(kMaxFrameBytes, "value");
  if (status == Status::Timeout)
    throw TimeoutError(ErrorContext{-1, "store.get", -1},
                       fmt::format("key '{}' did not appear in the store at {} within {}", key,
                                   impl_->where, net::describe_duration(impl_->timeout)));
  impl_->fail("store.get", status, r);
}

int64_t StoreClient::add(const std::string& key, int64_t delta) {
  std::lock_guard lock(impl_->mutex);
  impl_->check_key("store.add", key);
  wire::Writer w = impl_->begin_request(Op::Add);
  w.string(key);
  w.i64(delta);
  net::end_frame(impl_->out, 0);
  const auto reply = impl_->round_trip("store.add");
  wire::Reader r(reply, "store answer");
  const auto status = static_cast<Status>(r.u8());
  if (status != Status::Ok) impl_->fail("store.add", status, r);
  return r.i64();
}

void StoreClient::wait(const std::vector<std::string>& keys) { wait(keys, impl_->timeout); }

void StoreClient::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  std::lock_guard lock(impl_->mutex);
  for (const auto& key : keys) impl_->check_key("store.wait", key);
  wire::Writer w = impl_->begin_request(Op::Wait);
  write_keys(w, keys);
  w.u32(to_wire_ms(timeout));
  net::end_frame(impl_->out, 0);
  const auto reply = impl_->round_trip("store.wait", timeout);
  wire::Reader r(reply, "store answer");
  const auto status = static_cast<Status>(r.u8());
  if (status == Status::Ok) return;
  if (status == Status::Timeout) {
    const std::string missing = r.string(kMaxKeyBytes, "key");
    throw TimeoutError(ErrorContext{-1, "store.wait", -1},
                       fmt::format("key '{}' (of {} awaited) did not appear in the store at {} within {}",
                                   missing, keys.size(), impl_->where, net::describe_duration(timeout)));
  }
  impl_->fail("store.wait", status, r);
}

bool StoreClient::check(const std::vector<std::string>& keys) {
  std::lock_guard lock(impl_->mutex);
  for (const auto& key : keys) impl_->check_key("store.check", key);
  wire::Writer w = impl_->begin_request(Op::Check);
  write_keys(w, keys);
  net::end_frame(impl_->out, 0);
  const auto reply = impl_->round_trip("store.check");
  wire::Reader r(reply, "store answer");
  const auto status = static_cast<Status>(r.u8());
  if (status != Status::Ok) impl_->fail("store.check", status, r);
  return r.u8() != 0;
}

}  // namespace ringlab

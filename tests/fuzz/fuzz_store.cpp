// libFuzzer target: the rendezvous store's server (engine/net/store.cpp) fed arbitrary bytes.
//
// The store has no function that takes a request without a socket (its frame handling lives in
// StoreServer::Impl, private to store.cpp), so every input goes over a real loopback connection
// to an in-process StoreServer, the way a hostile local client would send it:
//   first byte even: the harness first presents the right token, then sends the rest of the input
//                    (requests after a good handshake: what a buggy or malicious worker sends);
//   first byte odd:  the rest of the input is sent as it is (a stranger's hello and what follows).
// The harness then half-closes its side and reads every answer until the server closes the
// connection. A fresh server per input keeps each input reproducible on its own (no keys left
// over from earlier inputs); a blocking Get or Wait with a long timeout is ended by stopping
// that server, which must answer "stopping" and join its threads without hanging.
//
// Checked: no crash or sanitizer report in the server; every answer is a well-formed frame with
// a known status byte; the server closes the connection once the input is used up; stop() ends.
// RINGLAB_FUZZ_WRITE_SEEDS=DIR: write a seed corpus of valid sessions into DIR and exit.
#include <poll.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "engine/core/error.h"
#include "engine/net/framing.h"
#include "engine/net/socket.h"
#include "engine/net/store.h"
#include "engine/net/wire.h"
#include "tests/fuzz/fuzz_seeds.h"

namespace {

using namespace ringlab;
using std::chrono::milliseconds;

// From the protocol described at the top of engine/net/store.cpp.
constexpr uint32_t kStoreMagic = 0x54534c52;  // "RLST"
constexpr uint16_t kStoreVersion = 1;
enum Op : uint8_t { Set = 1, Get = 2, Add = 3, Wait = 4, Check = 5 };
constexpr uint8_t kLastStatus = 3;  // Ok, Timeout, Stopping, BadRequest
constexpr size_t kMaxAnswerBytes = 16 * 1024 * 1024;
const std::string kToken = "fuzz-token-0123456789abcdef";

std::vector<uint8_t> hello_frame(const std::string& token) {
  std::vector<uint8_t> out;
  const size_t frame = net::begin_frame(out);
  wire::Writer w(out);
  w.u32(kStoreMagic);
  w.u16(kStoreVersion);
  w.string(token);
  net::end_frame(out, frame);
  return out;
}

// Reads whatever the server sends until it closes the connection or `deadline` passes.
// True when the server closed the connection first.
bool read_answers(int fd, std::vector<uint8_t>& got, net::Deadline deadline) {
  uint8_t buf[65536];
  while (true) {
    ssize_t n = 0;
    try {
      n = net::read_some(fd, buf, sizeof buf, "store");
    } catch (const Error&) {
      return true;  // reset by the server: closed as well
    }
    if (n > 0) {
      got.insert(got.end(), buf, buf + n);
      continue;
    }
    if (n == 0) return true;
    if (!net::wait_ready(fd, POLLIN, deadline)) return false;
  }
}

// Every answer: u32 length, a body of at least a status byte with a known value.
void check_answers(const std::vector<uint8_t>& got) {
  size_t pos = 0;
  while (pos < got.size()) {
    if (got.size() - pos < 4) {
      std::fprintf(stderr, "the store's answer stream ends inside a frame header\n");
      std::abort();
    }
    uint32_t length = 0;
    for (int i = 0; i < 4; ++i) length |= static_cast<uint32_t>(got[pos + i]) << (8 * i);
    if (length == 0 || length > kMaxAnswerBytes || got.size() - pos - 4 < length) {
      std::fprintf(stderr, "the store sent a malformed answer frame (length %u)\n", length);
      std::abort();
    }
    const uint8_t status = got[pos + 4];
    if (status > kLastStatus) {
      std::fprintf(stderr, "the store answered with unknown status %u\n", status);
      std::abort();
    }
    pos += 4 + length;
  }
}

void write_seeds(const std::string& dir) {
  auto request = [](auto fill) {
    std::vector<uint8_t> out;
    const size_t frame = net::begin_frame(out);
    wire::Writer w(out);
    fill(w);
    net::end_frame(out, frame);
    return out;
  };
  std::vector<uint8_t> session;
  auto add = [&](const std::vector<uint8_t>& r) { session.insert(session.end(), r.begin(), r.end()); };
  add(request([](wire::Writer& w) { w.u8(Set); w.string("rank/0/addr"); w.bytes(std::vector<uint8_t>{1, 2, 3}); }));
  add(request([](wire::Writer& w) { w.u8(Get); w.string("rank/0/addr"); w.u32(0); }));
  add(request([](wire::Writer& w) { w.u8(Add); w.string("counter"); w.i64(5); }));
  add(request([](wire::Writer& w) { w.u8(Add); w.string("rank/0/addr"); w.i64(1); }));  // not a number
  add(request([](wire::Writer& w) { w.u8(Wait); w.u32(2); w.string("counter"); w.string("missing"); w.u32(1); }));
  add(request([](wire::Writer& w) { w.u8(Check); w.u32(1); w.string("counter"); }));
  add(request([](wire::Writer& w) { w.u8(Get); w.string("missing"); w.u32(2); }));
  fuzz::write_seed(dir, "session", session, 0);
  fuzz::write_seed(dir, "hello_right_token", hello_frame(kToken), 1);
  fuzz::write_seed(dir, "hello_wrong_token", hello_frame("wrong"), 1);
  std::vector<uint8_t> hello_then = hello_frame(kToken);
  hello_then.insert(hello_then.end(), session.begin(), session.end());
  fuzz::write_seed(dir, "hello_then_session", hello_then, 1);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) { return fuzz::write_seeds_if_asked(write_seeds); }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool raw = data[0] & 1;
  std::vector<uint8_t> bytes = raw ? std::vector<uint8_t>() : hello_frame(kToken);
  bytes.insert(bytes.end(), data + 1, data + size);

  StoreServer server("127.0.0.1", 0, kToken);
  net::Socket socket = net::connect_tcp("127.0.0.1", server.port(), milliseconds(5000));
  try {
    net::write_all(socket.fd(), bytes.data(), bytes.size(), net::deadline_after(milliseconds(2000)), "store");
  } catch (const Error&) {
    // The server may close a bad connection before it has read everything: that is allowed.
  }
  ::shutdown(socket.fd(), SHUT_WR);
  std::vector<uint8_t> got;
  // Non-blocking requests are answered at once; a Get or Wait may legitimately wait for its
  // own timeout (the input chooses it), which this bound cuts short.
  const bool closed = read_answers(socket.fd(), got, net::deadline_after(milliseconds(50)));
  if (closed) check_answers(got);
  server.stop();  // must end every connection and thread, whatever the input left waiting
  return 0;
}

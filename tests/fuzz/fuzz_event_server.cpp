// libFuzzer target: the controller's event server (engine/net/event_server.cpp) fed
// arbitrary bytes over a loopback connection, after the right hello (first input byte even) or
// as they are (odd: a stranger's hello).
//
// Checked: no crash or sanitizer report; the server closes the connection once the input is
// used up; and no event is lost or invented: after a good hello, the number of events handed to
// the sink equals the number of whole, valid frames at the front of the input.
#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <span>
#include <vector>

#include "engine/core/error.h"
#include "tests/fuzz/fuzz_seeds.h"
#include "engine/net/socket.h"
#include "engine/net/event_codec.h"
#include "engine/net/event_server.h"

namespace {

using namespace ringlab;
using std::chrono::milliseconds;

const std::string kToken = "fuzz-token-0123456789abcdef";

class CountingSink : public EventSink {
 public:
  void emit(Event) override { ++count; }
  std::atomic<uint64_t> count{0};
};

// How many events a correct server takes from `bytes` before it has to stop: whole frames
// that decode, up to the first that does not.
uint64_t valid_frames_at_front(std::span<const uint8_t> bytes) {
  uint64_t n = 0;
  size_t pos = 0;
  while (bytes.size() - pos >= 4) {
    uint32_t length = 0;
    for (int i = 0; i < 4; ++i) length |= static_cast<uint32_t>(bytes[pos + i]) << (8 * i);
    if (length > event_codec::kMaxFrameBytes || bytes.size() - pos - 4 < length) break;
    try {
      event_codec::decode(bytes.subspan(pos, 4 + length));
    } catch (const Error&) {
      break;
    }
    ++n;
    pos += 4 + length;
  }
  return n;
}

// Seeds: mode byte 0 (the harness says hello), then a few real events from the encoder.
void write_seeds(const std::string& dir) {
  std::vector<uint8_t> frames;
  Event step;
  step.kind = EventKind::StepEnd;
  step.step = 3;
  step.value = 0.5;
  event_codec::encode(step, frames);
  Event chunk;
  chunk.kind = EventKind::ChunkTransfer;
  chunk.phase = 0;
  chunk.values = {1.0f, 2.0f};
  event_codec::encode(chunk, frames);
  fuzz::write_seed(dir, "events", frames, 0);
  std::vector<uint8_t> hello;
  event_codec::encode_hello({event_codec::kVersion, "wrong", 1}, hello);
  fuzz::write_seed(dir, "wrong_token", hello, 1);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) { return fuzz::write_seeds_if_asked(write_seeds); }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool raw = data[0] & 1;
  std::vector<uint8_t> bytes;
  if (!raw) event_codec::encode_hello({event_codec::kVersion, kToken, 0}, bytes);
  bytes.insert(bytes.end(), data + 1, data + size);

  CountingSink sink;
  EventServer server("127.0.0.1", 0, kToken, sink);
  net::Socket socket = net::connect_tcp("127.0.0.1", server.port(), milliseconds(5000));
  try {
    net::write_all(socket.fd(), bytes.data(), bytes.size(), net::deadline_after(milliseconds(2000)), "events");
  } catch (const Error&) {
  }
  ::shutdown(socket.fd(), SHUT_WR);
  // The server reads to the end of the input and closes; it never blocks on anything else.
  uint8_t buf[256];
  bool closed = false;
  const auto deadline = net::deadline_after(milliseconds(5000));
  while (!closed) {
    ssize_t n = 0;
    try {
      n = net::read_some(socket.fd(), buf, sizeof buf, "events");
    } catch (const Error&) {
      n = 0;
    }
    if (n == 0) closed = true;
    else if (n < 0 && !net::wait_ready(socket.fd(), POLLIN, deadline)) break;
  }
  if (!closed) {
    std::fprintf(stderr, "the event server kept the connection open 5 s after the input ended\n");
    std::abort();
  }
  if (!server.wait_drained(milliseconds(5000))) {
    std::fprintf(stderr, "the event server did not finish the connection\n");
    std::abort();
  }
  if (!raw) {
    const uint64_t expected = valid_frames_at_front(std::span<const uint8_t>(data + 1, size - 1));
    if (sink.count.load() != expected) {
      std::fprintf(stderr, "the event server delivered %llu events, the input holds %llu valid frames\n",
                   static_cast<unsigned long long>(sink.count.load()), static_cast<unsigned long long>(expected));
      std::abort();
    }
  }
  server.stop();
  return 0;
}

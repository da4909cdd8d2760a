#include "engine/net/event_codec.h"

#include <algorithm>

#include <fmt/core.h>

#include "engine/core/error.h"
#include "engine/net/framing.h"
#include "engine/net/wire.h"

namespace ringlab::event_codec {
namespace {

constexpr uint8_t kLastKind = static_cast<uint8_t>(kLastEventKind);

void check_limit(size_t size, size_t limit, const char* field, const Event& event) {
  if (size > limit)
    throw Error(ErrorContext{event.rank, "events", event.step},
                fmt::format("{} event has {} {}, more than the wire limit of {}",
                            to_string(event.kind), size, field, limit));
}

}  // namespace

size_t encoded_size(const Event& e) {
  return net::kFrameHeaderBytes + kFixedBodyBytes + e.values.size() * sizeof(float) +
         e.indices.size() * sizeof(int64_t) + e.text.size();
}

int64_t clock_offset_ns(int64_t sent_ns, int64_t server_ns, int64_t read_ns) {
  const int64_t round_trip = read_ns - sent_ns;
  const int64_t offset = server_ns - (sent_ns + round_trip / 2);
  return (offset > round_trip || offset < -round_trip) ? offset : 0;
}

void encode_hello(const Hello& hello, std::vector<uint8_t>& out) {
  if (hello.token.size() > kMaxTokenBytes)
    throw Error(fmt::format("token of {} bytes is longer than the limit of {}", hello.token.size(),
                            kMaxTokenBytes));
  const size_t frame = net::begin_frame(out);
  wire::Writer w(out);
  w.u32(kMagic);
  w.u16(hello.version);
  w.string(hello.token);
  w.i32(hello.rank);
  net::end_frame(out, frame);
}

Hello decode_hello_body(std::span<const uint8_t> body) {
  wire::Reader r(body, "event stream hello");
  if (r.u32() != kMagic) throw Error("not a ringlab event stream (wrong magic number)");
  Hello hello;
  hello.version = r.u16();
  hello.token = r.string(kMaxTokenBytes, "token");
  hello.rank = r.i32();
  r.expect_end();
  return hello;
}

void encode(const Event& e, std::vector<uint8_t>& out) {
  check_limit(e.values.size(), kMaxValues, "values", e);
  check_limit(e.indices.size(), kMaxIndices, "indices", e);
  check_limit(e.text.size(), kMaxTextBytes, "bytes of text", e);
  // Grow geometrically: reserving the exact size for every appended event would copy the whole
  // buffer once per event.
  const size_t needed = out.size() + encoded_size(e);
  if (needed > out.capacity()) out.reserve(std::max(needed, 2 * out.capacity()));
  const size_t frame = net::begin_frame(out);
  wire::Writer w(out);
  w.u8(static_cast<uint8_t>(e.kind));
  w.i32(e.rank);
  w.i64(e.t_begin_ns);
  w.i64(e.t_end_ns);
  w.i64(e.step);
  w.i32(e.epoch);
  w.i64(e.collective_id);
  w.i32(e.bucket);
  w.i8(e.phase);
  w.i32(e.ring_step);
  w.i32(e.chunk);
  w.i32(e.segment);
  w.i32(e.src);
  w.i32(e.dst);
  w.i64(e.bytes);
  w.f64(e.value);
  w.i32(e.code);
  w.u32(static_cast<uint32_t>(e.values.size()));
  w.array<float>(e.values);
  w.u32(static_cast<uint32_t>(e.indices.size()));
  w.array<int64_t>(e.indices);
  w.string(e.text);
  net::end_frame(out, frame);
}

Event decode_body(std::span<const uint8_t> body) {
  if (body.size() > kMaxFrameBytes)
    throw Error(fmt::format("event of {} bytes is larger than the limit of {}", body.size(), kMaxFrameBytes));
  wire::Reader r(body, "event");
  Event e;
  const uint8_t kind = r.u8();
  if (kind > kLastKind) throw Error(fmt::format("event: unknown kind {}", kind));
  e.kind = static_cast<EventKind>(kind);
  e.rank = r.i32();
  e.t_begin_ns = r.i64();
  e.t_end_ns = r.i64();
  e.step = r.i64();
  e.epoch = r.i32();
  e.collective_id = r.i64();
  e.bucket = r.i32();
  e.phase = r.i8();
  if (e.phase < -1 || e.phase > 1) throw Error(fmt::format("event: unknown ring phase {}", e.phase));
  e.ring_step = r.i32();
  e.chunk = r.i32();
  e.segment = r.i32();
  e.src = r.i32();
  e.dst = r.i32();
  e.bytes = r.i64();
  e.value = r.f64();
  e.code = r.i32();
  e.values = r.array<float>(kMaxValues, "values");
  e.indices = r.array<int64_t>(kMaxIndices, "indices");
  e.text = r.string(kMaxTextBytes, "text");
  r.expect_end();
  return e;
}

Event decode(std::span<const uint8_t> frame) {
  wire::Reader r(frame, "event frame");
  const uint32_t length = r.u32();
  if (length != r.remaining())
    throw Error(fmt::format("event frame: length field says {} bytes, {} follow", length, r.remaining()));
  return decode_body(r.raw(length));
}

}  // namespace ringlab::event_codec

// The event wire format: every field survives a round trip, and no input (cut short at any byte,
// random, bit-flipped, with forged lengths) makes the decoder do anything but return or throw Error.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "engine/core/error.h"
#include "engine/net/wire.h"
#include "engine/net/event_codec.h"

using namespace ringlab;

namespace {

Event full_event() {
  Event e;
  e.kind = EventKind::ChunkTransfer;
  e.rank = 3;
  e.t_begin_ns = 1'234'567'890'123;
  e.t_end_ns = -5;
  e.step = 1LL << 40;
  e.epoch = 7;
  e.collective_id = 99;
  e.bucket = 2;
  e.phase = static_cast<int8_t>(RingPhase::AllGather);
  e.ring_step = 5;
  e.chunk = 11;
  e.segment = 4;
  e.src = 2;
  e.dst = 3;
  e.bytes = 3LL << 33;
  e.value = -0.1234567890123;
  e.code = 3;
  e.values = {1.5f, -0.0f, std::numeric_limits<float>::infinity(), 3.25e-38f, 42.0f};
  e.indices = {0, -1, std::numeric_limits<int64_t>::max(), 17};
  e.text = std::string("chunk \xc3\xa9t\xc3\xa9 with a \0 byte", 23);
  return e;
}

void check_same(const Event& a, const Event& b) {
  CHECK(a.kind == b.kind);
  CHECK(a.rank == b.rank);
  CHECK(a.t_begin_ns == b.t_begin_ns);
  CHECK(a.t_end_ns == b.t_end_ns);
  CHECK(a.step == b.step);
  CHECK(a.epoch == b.epoch);
  CHECK(a.collective_id == b.collective_id);
  CHECK(a.bucket == b.bucket);
  CHECK(a.phase == b.phase);
  CHECK(a.ring_step == b.ring_step);
  CHECK(a.chunk == b.chunk);
  CHECK(a.segment == b.segment);
  CHECK(a.src == b.src);
  CHECK(a.dst == b.dst);
  CHECK(a.bytes == b.bytes);
  CHECK(std::memcmp(&a.value, &b.value, sizeof a.value) == 0);  // bit for bit
  CHECK(a.code == b.code);
  REQUIRE(a.values.size() == b.values.size());
  if (!a.values.empty()) CHECK(std::memcmp(a.values.data(), b.values.data(), a.values.size() * sizeof(float)) == 0);
  CHECK(a.indices == b.indices);
  CHECK(a.text == b.text);
}

std::vector<uint8_t> encoded(const Event& e) {
  std::vector<uint8_t> out;
  event_codec::encode(e, out);
  return out;
}

// The decoder may only ever return an event or throw ringlab::Error.
bool decodes_or_throws_error(std::span<const uint8_t> bytes) {
  try {
    (void)event_codec::decode(bytes);
  } catch (const Error&) {
  } catch (...) {
    return false;
  }
  return true;
}

// A body with all fixed fields zero and the given array header at the values position.
std::vector<uint8_t> body_with_counts(uint32_t n_values, uint32_t n_indices, uint32_t n_text) {
  std::vector<uint8_t> body;
  wire::Writer w(body);
  w.u8(static_cast<uint8_t>(EventKind::Log));
  body.resize(event_codec::kFixedBodyBytes - 12);  // every fixed field, zero
  w.u32(n_values);
  w.u32(n_indices);
  w.u32(n_text);
  return body;
}

}  // namespace

TEST_CASE("every field of an event survives a round trip") {
  const Event original = full_event();
  const std::vector<uint8_t> bytes = encoded(original);
  CHECK(bytes.size() == event_codec::encoded_size(original));
  check_same(event_codec::decode(bytes), original);

  // A default event (all -1 / 0 / empty) too.
  const Event plain;
  const auto plain_bytes = encoded(plain);
  CHECK(plain_bytes.size() == 4 + event_codec::kFixedBodyBytes);
  check_same(event_codec::decode(plain_bytes), plain);
}

TEST_CASE("every event kind and phase round-trips") {
  // Up to the last kind the codec accepts, so that a kind added at the end is covered too.
  int kinds = 0;
  for (int kind = 0; kind <= static_cast<int>(kLastEventKind); ++kind, ++kinds) {
    for (int phase = -1; phase <= 1; ++phase) {
      Event e = full_event();
      e.kind = static_cast<EventKind>(kind);
      e.phase = static_cast<int8_t>(phase);
      check_same(event_codec::decode(encoded(e)), e);
    }
  }
  CHECK(kinds == static_cast<int>(kLastEventKind) + 1);  // every kind, the typed controller events included
  CHECK(kLastEventKind == EventKind::Straggle);
  Event past_the_last = full_event();
  auto bytes = encoded(past_the_last);
  bytes[4] = static_cast<uint8_t>(kinds);  // the kind is the body's first byte
  CHECK_THROWS_AS(event_codec::decode(bytes), Error);
}

TEST_CASE("the layout is little-endian and field by field") {
  Event e;
  e.kind = EventKind::StepEnd;
  e.rank = 0x01020304;
  const auto bytes = encoded(e);
  // u32 length, then u8 kind, then i32 rank, least significant byte first.
  CHECK(bytes[0] == event_codec::kFixedBodyBytes);
  CHECK(bytes[1] == 0);
  CHECK(bytes[4] == static_cast<uint8_t>(EventKind::StepEnd));
  CHECK(bytes[5] == 0x04);
  CHECK(bytes[6] == 0x03);
  CHECK(bytes[7] == 0x02);
  CHECK(bytes[8] == 0x01);
}

TEST_CASE("frames appended back to back decode one by one") {
  std::vector<uint8_t> stream;
  std::vector<Event> sent;
  for (int i = 0; i < 5; ++i) {
    Event e = full_event();
    e.step = i;
    e.values.resize(static_cast<size_t>(i));
    e.text = std::string(static_cast<size_t>(i * 3), 'x');
    event_codec::encode(e, stream);
    sent.push_back(e);
  }
  size_t at = 0;
  for (const Event& expected : sent) {
    const size_t size = event_codec::encoded_size(expected);
    check_same(event_codec::decode({stream.data() + at, size}), expected);
    at += size;
  }
  CHECK(at == stream.size());
}

TEST_CASE("an event cut short at any byte throws Error and never reads past the end") {
  const std::vector<uint8_t> bytes = encoded(full_event());
  for (size_t length = 0; length < bytes.size(); ++length) {
    // A copy of exactly `length` bytes, so a read past the end would touch freed or foreign
    // memory (and trip a sanitizer build).
    const std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(length));
    CHECK_THROWS_AS(event_codec::decode(cut), Error);
    if (length >= 4) {
      const std::vector<uint8_t> body(cut.begin() + 4, cut.end());
      CHECK_THROWS_AS(event_codec::decode_body(body), Error);
    }
  }
  // One byte too many.
  std::vector<uint8_t> longer = bytes;
  longer.push_back(0);
  CHECK_THROWS_AS(event_codec::decode(longer), Error);
  const std::vector<uint8_t> body_longer(longer.begin() + 4, longer.end());
  CHECK_THROWS_AS(event_codec::decode_body(body_longer), Error);
}

TEST_CASE("random bytes and bit flips only ever decode or throw Error") {
  std::mt19937 rng(12345);
  std::uniform_int_distribution<int> byte(0, 255);
  for (int trial = 0; trial < 20000; ++trial) {
    std::vector<uint8_t> junk(static_cast<size_t>(rng() % 200));
    for (auto& b : junk) b = static_cast<uint8_t>(byte(rng));
    if (junk.size() >= 4 && trial % 2 == 0) {  // half of them with a consistent length field
      const auto n = static_cast<uint32_t>(junk.size() - 4);
      std::memcpy(junk.data(), &n, 4);
    }
    REQUIRE(decodes_or_throws_error(junk));
  }
  const std::vector<uint8_t> good = encoded(full_event());
  for (size_t i = 0; i < good.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::vector<uint8_t> flipped = good;
      flipped[i] ^= static_cast<uint8_t>(1u << bit);
      REQUIRE(decodes_or_throws_error(flipped));
    }
  }
}

TEST_CASE("forged lengths are refused before anything is allocated") {
  SUBCASE("a values count over the limit") {
    const auto body = body_with_counts(0xffffffffu, 0, 0);
    CHECK_THROWS_WITH_AS(event_codec::decode_body(body), doctest::Contains("more than the limit"), Error);
  }
  SUBCASE("an indices count over the limit") {
    const auto body = body_with_counts(0, static_cast<uint32_t>(event_codec::kMaxIndices + 1), 0);
    CHECK_THROWS_WITH_AS(event_codec::decode_body(body), doctest::Contains("more than the limit"), Error);
  }
  SUBCASE("a text length over the limit") {
    const auto body = body_with_counts(0, 0, 0xfffffff0u);
    CHECK_THROWS_WITH_AS(event_codec::decode_body(body), doctest::Contains("more than the limit"), Error);
  }
  SUBCASE("a count within the limit but beyond the bytes present") {
    const auto body = body_with_counts(1000, 0, 0);
    CHECK_THROWS_WITH_AS(event_codec::decode_body(body), doctest::Contains("truncated"), Error);
  }
  SUBCASE("a frame length that disagrees with the bytes given") {
    std::vector<uint8_t> frame = encoded(Event{});
    frame[0] = static_cast<uint8_t>(frame[0] + 1);
    CHECK_THROWS_AS(event_codec::decode(frame), Error);
    frame[0] = 0xff;
    frame[3] = 0xff;
    CHECK_THROWS_AS(event_codec::decode(frame), Error);
  }
  SUBCASE("an unknown kind or phase") {
    std::vector<uint8_t> frame = encoded(Event{});
    frame[4] = 200;
    CHECK_THROWS_WITH_AS(event_codec::decode(frame), doctest::Contains("unknown kind"), Error);
    frame = encoded(Event{});
    frame[4 + 1 + 4 + 8 + 8 + 8 + 4 + 8 + 4] = 7;  // the phase byte
    CHECK_THROWS_WITH_AS(event_codec::decode(frame), doctest::Contains("phase"), Error);
  }
}

TEST_CASE("the encoder refuses events over the wire limits") {
  Event e;
  e.values.resize(event_codec::kMaxValues + 1);
  CHECK_THROWS_WITH_AS(encoded(e), doctest::Contains("values"), Error);
  e.values.clear();
  e.text.assign(event_codec::kMaxTextBytes + 1, 'x');
  CHECK_THROWS_WITH_AS(encoded(e), doctest::Contains("text"), Error);
  // At the limit exactly is fine.
  e.text.assign(event_codec::kMaxTextBytes, 'x');
  e.values.assign(event_codec::kMaxValues, 0.5f);
  CHECK(event_codec::decode(encoded(e)).values.size() == event_codec::kMaxValues);
}

TEST_CASE("the hello carries magic, version, token and rank") {
  std::vector<uint8_t> frame;
  const std::string token("tok\0en", 6);
  event_codec::encode_hello({event_codec::kVersion, token, 5}, frame);
  const std::span<const uint8_t> body(frame.data() + 4, frame.size() - 4);
  const auto hello = event_codec::decode_hello_body(body);
  CHECK(hello.version == event_codec::kVersion);
  CHECK(hello.token == token);
  CHECK(hello.rank == 5);

  std::vector<uint8_t> wrong_magic(body.begin(), body.end());
  wrong_magic[0] ^= 1;
  CHECK_THROWS_WITH_AS(event_codec::decode_hello_body(wrong_magic), doctest::Contains("magic"), Error);
  for (size_t length = 0; length < body.size(); ++length) {
    const std::vector<uint8_t> cut(body.begin(), body.begin() + static_cast<std::ptrdiff_t>(length));
    CHECK_THROWS_AS(event_codec::decode_hello_body(cut), Error);
  }
}

TEST_CASE("a client's clock offset: kept across machines, zero where it cannot be told from the round trip") {
  // Hello sent at 1000, answered, read at 1400: a 400 ns round trip, midpoint 1200.
  CHECK(event_codec::clock_offset_ns(1000, 1200, 1400) == 0);          // same clock
  CHECK(event_codec::clock_offset_ns(1000, 1500, 1400) == 0);          // 300 off: within the round trip
  CHECK(event_codec::clock_offset_ns(1000, 1700, 1400) == 500);        // beyond it: the server is ahead
  CHECK(event_codec::clock_offset_ns(1000, 1200 - 401, 1400) == -401); // or behind
  // Two machines whose steady clocks began 3 hours apart, 80 us of network each way.
  const int64_t hours3 = int64_t{3} * 3600 * 1'000'000'000;
  CHECK(event_codec::clock_offset_ns(5'000'000, 5'080'000 + hours3, 5'160'000) == hours3);
}

#pragma once
// The event stream's wire format, version 2: how a worker's events travel to the controller.
// A connection starts with a hello frame (magic, version, token, rank) and then carries one frame
// per event. A frame is a u32 little-endian body length followed by the body; every field is
// written explicitly in little-endian order:
//
//   hello: u32 magic "RLEV", u16 version, u32 token length + token bytes, i32 rank
//   event: u8 kind, i32 rank, i64 t_begin_ns, i64 t_end_ns, i64 step, i32 epoch,
//          i64 collective_id, i32 bucket, i8 phase, i32 ring_step, i32 chunk, i32 segment,
//          i32 src, i32 dst, i64 bytes, f64 value, i32 code,
//          u32 n + n x f32 values, u32 n + n x i64 indices, u32 n + n bytes of text
//
// decode() trusts nothing: every length is checked against its limit and against the bytes
// actually present before anything is read or allocated, and it throws Error on any mismatch.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/events/event.h"

namespace ringlab::event_codec {

inline constexpr uint32_t kMagic = 0x56454c52;  // the bytes "RLEV"
// 2: the typed `code` of errors, faults and stops; 3: the server's clock in its answer to a hello.
inline constexpr uint16_t kVersion = 3;

// Limits a decoder enforces (and an encoder refuses to exceed).
inline constexpr size_t kMaxValues = 1 << 20;        // chunk values: 4 MiB of float32
inline constexpr size_t kMaxIndices = 4 << 20;       // a sampler shard: 32 MiB of int64
inline constexpr size_t kMaxTextBytes = 4 << 20;     // log lines, errors, the job's JSON
inline constexpr size_t kMaxTokenBytes = 4096;
inline constexpr size_t kMaxFrameBytes = 64 << 20;   // any frame's body
inline constexpr size_t kFixedBodyBytes = 98;        // an event body with no values, indices, text

struct Hello {
  uint16_t version = kVersion;
  std::string token;
  int32_t rank = -1;
};

// Append one whole frame (length + body) to `out`.
void encode_hello(const Hello& hello, std::vector<uint8_t>& out);

// How far the event server's steady clock is ahead of this process's, from one round trip: the
// hello sent at `sent_ns`, answered with the server's `server_ns`, the answer read at `read_ns`
// (the client's clock). The server read its clock somewhere in between, so the estimate is off by
// at most half the round trip; an offset no larger than the round trip cannot be told from zero
// and is 0 (processes on one machine share the clock: their timestamps are left exactly as they
// are). Across machines, adding it to a timestamp puts the event on the server's timeline.
int64_t clock_offset_ns(int64_t sent_ns, int64_t server_ns, int64_t read_ns);
void encode(const Event& event, std::vector<uint8_t>& out);  // throws Error when over a limit

// The body of an encoded frame, and the whole frame. Hello's magic is checked here; its version
// and token are for the caller to judge.
Hello decode_hello_body(std::span<const uint8_t> body);
Event decode_body(std::span<const uint8_t> body);
Event decode(std::span<const uint8_t> frame);  // exactly one frame, nothing after it

// Size of encode()'s output for this event, header included.
size_t encoded_size(const Event& event);

}  // namespace ringlab::event_codec

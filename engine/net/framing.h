#pragma once
// Length-prefixed frames over a TCP stream: a u32 little-endian body length, then the body.
// TCP delivers a stream of bytes, not messages; the length prefix puts the message boundaries
// back, and the size limit stops a forged length from making the reader allocate gigabytes.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/net/socket.h"

namespace ringlab::net {

inline constexpr size_t kFrameHeaderBytes = 4;

// Starts a frame at the end of `out` by reserving its length field; returns where the frame starts.
size_t begin_frame(std::vector<uint8_t>& out);
// Fills in the length field of the frame that starts at `frame_start`, once its body is appended.
void end_frame(std::vector<uint8_t>& out, size_t frame_start);

// Reads frames from a socket through one buffer, so a burst of small frames costs one read().
class FrameReader {
 public:
  FrameReader(int fd, size_t max_body_bytes, std::string peer);

  // The next frame's body, valid until the next call; nullopt when the peer closed the
  // connection between two frames. Waits for a frame's first byte until `idle_deadline`, then
  // at most `frame_timeout` for the rest of it. Throws Error on an oversized frame or a
  // connection closed mid-frame, TimeoutError when a wait runs out.
  std::optional<std::span<const uint8_t>> next(Deadline idle_deadline,
                                               std::chrono::milliseconds frame_timeout);
  // True when a whole frame is already buffered: the next call will not touch the socket.
  bool frame_buffered() const;
  const std::string& peer() const { return peer_; }

 private:
  // Header plus body of the frame at the front of the buffer, once its header is complete.
  std::optional<size_t> front_frame_size() const;
  void make_room(size_t frame_size);

  int fd_;
  size_t max_body_;
  std::string peer_;
  std::vector<uint8_t> buf_;
  size_t begin_ = 0;  // first unread byte
  size_t end_ = 0;    // one past the last received byte
};

}  // namespace ringlab::net

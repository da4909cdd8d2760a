#include "engine/net/framing.h"

#include <poll.h>

#include <algorithm>
#include <cstring>

#include <fmt/core.h>

#include "engine/core/error.h"

namespace ringlab::net {
namespace {

constexpr size_t kInitialBuffer = 64 * 1024;
constexpr size_t kShrinkAbove = 1024 * 1024;

}  // namespace

size_t begin_frame(std::vector<uint8_t>& out) {
  const size_t start = out.size();
  out.resize(start + kFrameHeaderBytes);
  return start;
}

void end_frame(std::vector<uint8_t>& out, size_t frame_start) {
  const size_t body = out.size() - frame_start - kFrameHeaderBytes;
  if (body > UINT32_MAX) throw Error(fmt::format("frame of {} bytes is too large to send", body));
  for (size_t i = 0; i < kFrameHeaderBytes; ++i)
    out[frame_start + i] = static_cast<uint8_t>(body >> (8 * i));
}

FrameReader::FrameReader(int fd, size_t max_body_bytes, std::string peer)
    : fd_(fd), max_body_(max_body_bytes), peer_(std::move(peer)), buf_(kInitialBuffer) {}

std::optional<size_t> FrameReader::front_frame_size() const {
  if (end_ - begin_ < kFrameHeaderBytes) return std::nullopt;
  uint32_t body = 0;
  for (size_t i = 0; i < kFrameHeaderBytes; ++i) body |= static_cast<uint32_t>(buf_[begin_ + i]) << (8 * i);
  if (body > max_body_)
    throw Error(fmt::format("{} sent a frame of {} bytes, more than the limit of {}", peer_, body,
                            max_body_));
  return kFrameHeaderBytes + body;
}

bool FrameReader::frame_buffered() const {
  const auto size = front_frame_size();
  return size && end_ - begin_ >= *size;
}

// Moves the unread bytes to the front and grows the buffer so a frame of `frame_size` fits.
void FrameReader::make_room(size_t frame_size) {
  const size_t unread = end_ - begin_;
  if (begin_ > 0 && (buf_.size() - begin_ < frame_size || unread == 0)) {
    std::memmove(buf_.data(), buf_.data() + begin_, unread);
    begin_ = 0;
    end_ = unread;
  }
  if (unread == 0 && buf_.size() > kShrinkAbove) {
    buf_.resize(kInitialBuffer);
    buf_.shrink_to_fit();
  }
  if (buf_.size() - begin_ < frame_size) buf_.resize(begin_ + frame_size);
}

std::optional<std::span<const uint8_t>> FrameReader::next(Deadline idle_deadline,
                                                          std::chrono::milliseconds frame_timeout) {
  bool started = end_ > begin_;
  Deadline frame_deadline = started ? deadline_after(frame_timeout) : kNoDeadline;
  while (true) {
    const auto size = front_frame_size();
    if (size && end_ - begin_ >= *size) {
      std::span<const uint8_t> body(buf_.data() + begin_ + kFrameHeaderBytes, *size - kFrameHeaderBytes);
      begin_ += *size;
      return body;
    }
    make_room(size.value_or(kFrameHeaderBytes));
    const ssize_t n = read_some(fd_, buf_.data() + end_, buf_.size() - end_, peer_);
    if (n > 0) {
      if (!started) frame_deadline = deadline_after(frame_timeout);
      started = true;
      end_ += static_cast<size_t>(n);
      continue;
    }
    if (n == 0) {
      if (end_ == begin_) return std::nullopt;
      throw Error(fmt::format("{} closed the connection in the middle of a frame", peer_));
    }
    if (!wait_ready(fd_, POLLIN, started ? frame_deadline : idle_deadline)) {
      if (started)
        throw TimeoutError(fmt::format("{} sent part of a frame, then nothing for {}", peer_,
                                       describe_duration(frame_timeout)));
      throw TimeoutError(fmt::format("no message from {} before the deadline", peer_));
    }
  }
}

}  // namespace ringlab::net

#include "engine/events/rank_spool.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/core.h>

#include "engine/core/error.h"
#include "engine/core/output_file.h"
#include "engine/core/private_dir.h"

namespace ringlab {
namespace {

// Appends are gathered in memory and written in blocks of this size: one system call per block
// rather than per record.
constexpr size_t kBlockBytes = 16 * 1024;

int open_unlinked_temp_file(const std::string& what) {
  const std::filesystem::path dir = temporary_directory();
  std::string path = (dir / "ringlab-spool-XXXXXX").string();
  const int fd = ::mkostemp(path.data(), O_CLOEXEC);
  if (fd < 0)
    throw Error(fmt::format("{}: cannot create a temporary file in {} ({}); set TMPDIR to a writable directory", what,
                            dir.string(), std::strerror(errno)));
  ::unlink(path.c_str());
  return fd;
}

}  // namespace

struct RankSpool::Stream {
  int fd = -1;
  uint64_t written = 0;      // bytes in the file
  std::vector<char> pending; // bytes not written yet
  ~Stream() {
    if (fd >= 0) ::close(fd);
  }
};

// A temporary file is made and dropped at once, so a temporary directory that cannot take one is
// an error before the run starts, not a report that fails after it.
RankSpool::RankSpool(std::string what) : what_(std::move(what)) { ::close(open_unlinked_temp_file(what_)); }
RankSpool::~RankSpool() = default;

RankSpool::Stream& RankSpool::stream_locked(int rank) {
  std::unique_ptr<Stream>& s = streams_[rank];
  if (!s) {
    s = std::make_unique<Stream>();
    s->fd = open_unlinked_temp_file(what_);
    s->pending.reserve(kBlockBytes);
  }
  return *s;
}

void RankSpool::flush_locked(int rank, Stream& s) const {
  size_t done = 0;
  while (done < s.pending.size() && failure_.empty()) {
    const ssize_t n = ::pwrite(s.fd, s.pending.data() + done, s.pending.size() - done,
                               static_cast<off_t>(s.written + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      failure_ = fmt::format("{}: writing rank {}'s temporary file failed: {}", what_, rank,
                             n < 0 ? std::strerror(errno) : "no progress");
    else
      done += static_cast<size_t>(n);
  }
  s.written += done;
  s.pending.clear();
}

void RankSpool::check_locked() const {
  if (!failure_.empty()) throw Error(failure_);
}

void RankSpool::append(int rank, const void* data, size_t bytes) {
  std::lock_guard lock(mutex_);
  if (!failure_.empty()) return;
  Stream* s = nullptr;
  try {
    s = &stream_locked(rank);
  } catch (const Error& e) {
    failure_ = e.what();
    return;
  }
  const char* p = static_cast<const char*>(data);
  s->pending.insert(s->pending.end(), p, p + bytes);
  if (s->pending.size() >= kBlockBytes) flush_locked(rank, *s);
}

uint64_t RankSpool::size(int rank) const {
  std::lock_guard lock(mutex_);
  const auto it = streams_.find(rank);
  return it == streams_.end() ? 0 : it->second->written + it->second->pending.size();
}

void RankSpool::truncate(int rank, uint64_t bytes) {
  std::lock_guard lock(mutex_);
  const auto it = streams_.find(rank);
  if (it == streams_.end()) return;
  Stream& s = *it->second;
  if (bytes >= s.written + s.pending.size()) return;
  if (bytes >= s.written) {
    s.pending.resize(bytes - s.written);
    return;
  }
  s.pending.clear();
  if (::ftruncate(s.fd, static_cast<off_t>(bytes)) != 0 && failure_.empty())
    failure_ = fmt::format("{}: truncating rank {}'s temporary file failed: {}", what_, rank, std::strerror(errno));
  s.written = bytes;
}

void RankSpool::read(int rank, uint64_t offset, void* out, size_t bytes) const {
  std::lock_guard lock(mutex_);
  check_locked();
  if (bytes == 0) return;
  const auto it = streams_.find(rank);
  const uint64_t end = it == streams_.end() ? 0 : it->second->written + it->second->pending.size();
  if (offset + bytes > end)
    throw Error(fmt::format("{}: rank {}: reading {} bytes at {} past the end ({})", what_, rank, bytes, offset, end));
  Stream& s = *it->second;
  flush_locked(rank, s);
  check_locked();
  size_t done = 0;
  while (done < bytes) {
    const ssize_t n = ::pread(s.fd, static_cast<char*>(out) + done, bytes - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw Error(fmt::format("{}: reading rank {}'s temporary file failed: {}", what_, rank,
                              n < 0 ? std::strerror(errno) : "unexpected end of file"));
    done += static_cast<size_t>(n);
  }
}

RankSpool::Reader::Reader(const RankSpool& spool, int rank) : spool_(spool), rank_(rank), end_(spool.size(rank)) {}

void RankSpool::Reader::read(void* out, size_t bytes) {
  char* to = static_cast<char*>(out);
  while (bytes > 0) {
    if (block_at_ == block_.size()) {  // every buffered byte handed out: offset_ is the next to fetch
      const uint64_t left = end_ - offset_;
      if (left == 0) spool_.read(rank_, offset_, out, bytes);  // past the end: throws, naming it
      block_.resize(static_cast<size_t>(std::min<uint64_t>(kBlockBytes, left)));
      spool_.read(rank_, offset_, block_.data(), block_.size());
      block_at_ = 0;
    }
    const size_t n = std::min(bytes, block_.size() - block_at_);
    std::copy_n(block_.data() + block_at_, n, to);
    block_at_ += n;
    offset_ += n;
    to += n;
    bytes -= n;
  }
}

std::vector<int> RankSpool::ranks() const {
  std::lock_guard lock(mutex_);
  std::vector<int> out;
  for (const auto& [rank, stream] : streams_) out.push_back(rank);
  return out;
}

std::string RankSpool::failure() const {
  std::lock_guard lock(mutex_);
  return failure_;
}

void write_spooled_file(const RankSpool& spool, const std::string& path, const char* what,
                        const std::function<void(std::ostream&)>& write) {
  if (const std::string failure = spool.failure(); !failure.empty()) throw Error(failure);
  write_output_file(path, what, write);
}

}  // namespace ringlab

#pragma once
// Per-rank append-only byte streams kept in anonymous temporary files. What a run accumulates
// per rank and step (each step's loss, each epoch's shard, each metrics row) goes to disk as it
// arrives, so the controller's memory does not grow with the length of the run; it is read back
// once, when the report or the CSV is written.
//
// The files are created in the temporary directory ($TMPDIR, else /tmp) and unlinked at once:
// nothing is left behind however the process ends. A failed write (a full disk) does not throw
// on the ingest thread: the first failure is kept, later appends are dropped, and every reader
// throws an Error that names it, so a report is never written with a silent hole.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <vector>

namespace ringlab {

class RankSpool {
 public:
  // `what` names the spool in errors: "the run's step losses". Throws Error when no temporary
  // file can be created.
  explicit RankSpool(std::string what);
  ~RankSpool();
  RankSpool(const RankSpool&) = delete;
  RankSpool& operator=(const RankSpool&) = delete;

  void append(int rank, const void* data, size_t bytes);
  uint64_t size(int rank) const;               // bytes appended to this rank's stream so far
  void truncate(int rank, uint64_t bytes);     // drop what follows the first `bytes`
  // Reads exactly `bytes` at `offset` of this rank's stream; throws Error past its end.
  void read(int rank, uint64_t offset, void* out, size_t bytes) const;
  std::vector<int> ranks() const;              // ranks with a stream, ascending
  std::string failure() const;                 // "" unless a write failed

  // Reads one rank's stream from the start, in blocks: one system call per block, however small
  // the pieces the caller asks for. Throws like read().
  class Reader {
   public:
    Reader(const RankSpool& spool, int rank);
    bool done() const { return offset_ == end_; }
    void read(void* out, size_t bytes);
    template <class T>
    T read() {
      T value;
      read(&value, sizeof value);
      return value;
    }

   private:
    const RankSpool& spool_;
    int rank_;
    uint64_t offset_ = 0, end_;       // next byte the caller gets; the stream's size
    std::vector<char> block_;
    size_t block_at_ = 0;             // next unread byte of block_
  };

 private:
  struct Stream;
  Stream& stream_locked(int rank);
  void flush_locked(int rank, Stream& s) const;
  void check_locked() const;

  std::string what_;
  mutable std::mutex mutex_;
  std::map<int, std::unique_ptr<Stream>> streams_;
  mutable std::string failure_;
};

// Writes the file at `path` with `write` from what `spool` kept, as an OutputFile (whole or not at
// all): refused before the file is opened when the spool lost a write. Throws Error naming `what`
// ("the metrics CSV"), the path and the reason when the file cannot be written.
void write_spooled_file(const RankSpool& spool, const std::string& path, const char* what,
                        const std::function<void(std::ostream&)>& write);

}  // namespace ringlab

#pragma once
// A bound on connections that have not yet presented the run's token. Servers accept up to a
// thousand connections (every rank's store and event clients); without this bound any local
// process could fill them with silent connections, each held until the hello timeout, and lock
// the run's own workers out. When too many are waiting, the one that has waited longest is cut
// off: a real client says hello the moment it connects, so it is never the oldest for long.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>

namespace ringlab::net {

class HelloGate {
 public:
  explicit HelloGate(size_t capacity) : capacity_(capacity) {}
  size_t capacity() const { return capacity_; }

  // Held by a connection from accept until its hello is answered (or the connection ends).
  class Pass {
   public:
    Pass(HelloGate& gate, int fd);
    Pass(const Pass&) = delete;
    Pass& operator=(const Pass&) = delete;
    ~Pass() { release(); }
    void release();        // a hello has arrived: no longer counted
    bool cut_off() const;  // a newer connection took this one's place before its hello came
    // "cut off before its hello: 64 other connections were waiting for theirs"
    std::string cut_off_reason() const;

   private:
    HelloGate* gate_;
    uint64_t id_;
  };

 private:
  struct Waiting {
    uint64_t id;
    int fd;
  };
  const size_t capacity_;
  std::mutex mutex_;
  uint64_t next_id_ = 0;
  std::deque<Waiting> waiting_;  // oldest first
};

}  // namespace ringlab::net

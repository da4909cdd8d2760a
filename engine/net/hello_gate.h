#pragma once
// A bound on connections that have not yet presented the run's token. Servers accept up to a
// thousand connections (every rank's store and event clients); without this bound any local
// process could fill them with silent connections, each held until the hello timeout, and lock
// the run's own workers out. When too many are waiting, the one that has waited longest is cut
// off: a real client says hello the moment it connects, so it is never the oldest for long.
//
// Cut-offs are counted rather than reported one by one (a flood of them would push the errors
// that matter, a wrong token or a garbled frame, out of a server's bounded error list): the
// server adds one summary line, summary(), to its errors.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_set>

namespace ringlab::net {

class HelloGate {
 public:
  explicit HelloGate(size_t capacity) : capacity_(capacity) {}

  // Held by a connection from accept until its hello frame has arrived (or the connection ends).
  class Pass {
   public:
    Pass(HelloGate& gate, int fd);
    Pass(const Pass&) = delete;
    Pass& operator=(const Pass&) = delete;
    ~Pass();
    // The hello has arrived: no longer counted. False if the connection had been cut off first
    // (its socket is shut down: the reply cannot be written).
    bool release();
    bool cut_off() const;  // a newer connection took this one's place before its hello came

   private:
    HelloGate* gate_;
    uint64_t id_;
  };

  // "6 connection(s) cut off before their hello: 64 newer ones were waiting for theirs"; "" if none.
  std::string summary() const;

 private:
  struct Waiting {
    uint64_t id;
    int fd;
  };
  const size_t capacity_;
  mutable std::mutex mutex_;
  uint64_t next_id_ = 0;
  uint64_t cut_offs_ = 0;
  std::deque<Waiting> waiting_;        // oldest first
  std::unordered_set<uint64_t> cut_;   // cut off, their Pass not yet gone
};

}  // namespace ringlab::net

#pragma once
// A process group whose ranks are threads of one process. The ranks share a LocalWorld: a set of
// mailboxes keyed by (src, dst, tag) where a send waits for the matching receive, exactly like a
// rendezvous transport. Unit tests (ring, DDP equivalence) and the simulator use it; every wait
// has the same timeout semantics as the real backends, so a missing peer is a TimeoutError.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "engine/dist/process_group.h"

namespace ringlab {

class LocalProcessGroup;

// The shared state of N thread-ranks. Create one, then hand group(r) to the thread of rank r.
class LocalWorld {
 public:
  explicit LocalWorld(int size, std::chrono::milliseconds timeout = std::chrono::milliseconds(60000));
  ~LocalWorld();
  LocalWorld(const LocalWorld&) = delete;
  LocalWorld& operator=(const LocalWorld&) = delete;

  int size() const { return static_cast<int>(groups_.size()); }
  LocalProcessGroup& group(int rank);

 private:
  friend class LocalProcessGroup;
  friend class LocalRequest;

  // One posted send or receive waiting for its partner. The poster owns it (through its
  // Request); the mailbox only points at it while it is unmatched.
  struct Transfer {
    enum class State { Posting, Queued, Copying, Done };
    const float* send_data = nullptr;  // set on sends
    float* recv_data = nullptr;        // set on receives
    size_t count = 0;
    State state = State::Posting;      // guarded by the world's mutex
    std::string error;                 // set when the partner's size did not match
    std::condition_variable changed;   // its owner waits here, so a completion wakes one thread
  };
  using Key = std::tuple<int, int, int>;  // (src, dst, tag)
  struct Mailbox {
    std::deque<Transfer*> sends;
    std::deque<Transfer*> recvs;
  };

  void post_send(Transfer* t, int src, int dst, int tag);
  void post_recv(Transfer* t, int src, int dst, int tag);
  void complete_pair(Transfer* send, Transfer* recv);
  bool wait_done(Transfer* t, std::chrono::milliseconds timeout);
  void cancel(Transfer* t, int src, int dst, int tag);
  bool barrier(std::chrono::milliseconds timeout);

  std::mutex mutex_;
  std::condition_variable barrier_cv_;
  std::map<Key, Mailbox> mailboxes_;
  std::vector<std::unique_ptr<LocalProcessGroup>> groups_;
  // Barrier state: a generation counter makes the barrier reusable back to back.
  int barrier_arrived_ = 0;
  uint64_t barrier_generation_ = 0;
};

class LocalProcessGroup : public ProcessGroup {
 public:
  LocalProcessGroup(LocalWorld& world, int rank, std::chrono::milliseconds timeout);

  int rank() const override { return rank_; }
  int size() const override { return world_.size(); }
  std::string backend() const override { return "local"; }

  std::unique_ptr<Request> isend(std::span<const float> data, int dst, int tag) override;
  std::unique_ptr<Request> irecv(std::span<float> data, int src, int tag) override;

  void broadcast(std::span<float> data, int root) override;
  void barrier() override;
  // Reduce to rank 0 over point-to-point, then broadcast: simple and obviously correct, which
  // is what the reference all-reduce of the thread world should be.
  void allreduce_native(std::span<float> data) override;

 private:
  void check_peer(int peer, const char* what) const;

  LocalWorld& world_;
  int rank_;
};

}  // namespace ringlab

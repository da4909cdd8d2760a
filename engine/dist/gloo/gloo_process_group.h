#pragma once
// The gloo process group: gloo's TCP transport for point-to-point (unbound buffers) and gloo's
// own algorithms for broadcast, barrier and all-reduce. Ranks find each other through a store:
// ringlab's StoreClient (processes) or any gloo::rendezvous::Store (tests run ranks as threads
// with gloo::rendezvous::HashStore).
//
// After a timeout gloo closes every connection of the group ("Application timeout caused pair
// closure"), as PyTorch's gloo group does: a TimeoutError leaves the group unusable.
//
// Two ways to move a point-to-point message. By default gloo's TCP pairs are served by its I/O
// thread: a receive is announced to the sender, the data moves once the announcement has
// arrived, the I/O thread reads it and wakes the waiting thread — several thread wake-ups per
// message, which on a small tensor are nearly all of its time. Messages of a small exchange
// (ProcessGroup::SmallExchange: the DDP step of a small model, the collective check) instead
// go over a second set of pairs in gloo's synchronous mode, written by the sending thread and
// read by the waiting one: one wake-up per message (docs/speed.md has the measurements).
// GlooSmallMessages::IoThread keeps every message on the I/O thread, for comparison.
#include <chrono>
#include <span>
#include <memory>
#include <string>

#include "engine/dist/process_group.h"

namespace gloo {
class Context;
namespace rendezvous { class Store; }
namespace transport { class Device; }
}  // namespace gloo

namespace ringlab {

class StoreClient;

enum class GlooSmallMessages { CallerThread, IoThread };

class GlooProcessGroup : public ProcessGroup {
 public:
  // `host`: the address this rank's TCP device binds to and advertises to its peers.
  GlooProcessGroup(int rank, int size, gloo::rendezvous::Store& store, std::chrono::milliseconds timeout,
                   const std::string& host = "127.0.0.1",
                   GlooSmallMessages small = GlooSmallMessages::CallerThread);
  GlooProcessGroup(int rank, int size, StoreClient& store, std::chrono::milliseconds timeout,
                   const std::string& host = "127.0.0.1",
                   GlooSmallMessages small = GlooSmallMessages::CallerThread);
  ~GlooProcessGroup() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string backend() const override { return "gloo"; }

  std::unique_ptr<Request> isend(std::span<const float> data, int dst, int tag) override;
  std::unique_ptr<Request> irecv(std::span<float> data, int src, int tag) override;

  void broadcast(std::span<float> data, int root) override;
  void barrier() override;
  void allreduce_native(std::span<float> data) override;

 private:
  void connect(gloo::rendezvous::Store& store, const std::string& host);
  void connect_caller_thread_pairs(gloo::rendezvous::Store& store);
  bool on_caller_thread(std::span<const float> data) const;
  void check_peer(int peer, const char* what) const;

  int rank_;
  int size_;
  GlooSmallMessages small_;
  std::shared_ptr<gloo::transport::Device> device_;
  std::shared_ptr<gloo::Context> context_;                // pairs served by gloo's I/O thread
  std::shared_ptr<gloo::Context> caller_thread_context_;  // pairs in synchronous mode (small exchanges)
};

// RINGLAB_GLOO_SMALL_MESSAGES: "caller-thread" (the default, also when unset) or "io-thread".
// Throws InputError naming the variable for anything else.
GlooSmallMessages gloo_small_messages_from_env();

// The interface address to use for reaching `master_addr`: 127.0.0.1 for loopback or an empty
// address, otherwise the local address the kernel would route to it from.
std::string gloo_host_for(const std::string& master_addr);

}  // namespace ringlab

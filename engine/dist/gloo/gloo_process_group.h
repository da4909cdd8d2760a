#pragma once
// The gloo process group: gloo's TCP transport for point-to-point (unbound buffers) and gloo's
// own algorithms for broadcast, barrier and all-reduce. Ranks find each other through a store:
// ringlab's StoreClient (processes) or any gloo::rendezvous::Store (tests run ranks as threads
// with gloo::rendezvous::HashStore).
//
// After a timeout gloo closes every connection of the group ("Application timeout caused pair
// closure"), as PyTorch's gloo group does: a TimeoutError leaves the group unusable.
//
// Two ways to move a point-to-point message. gloo's own TCP pairs are served by its I/O thread:
// a receive is announced to the sender, the data moves once the announcement has arrived, the
// I/O thread reads it and wakes the waiting thread — a round trip and several thread wake-ups
// per message, which on a small tensor are nearly all of its time and on a large one leave the
// transport idle between segments. So point-to-point (every ring all-reduce, the collective
// check, the ping-pong) goes over direct pairs instead: one connection per direction between
// two ranks, whose sending end writes from the sending thread (what the socket cannot take at
// once, gloo's I/O thread writes later, so posting a send never waits for the peer to read) and
// whose receiving end is in gloo's synchronous mode, read by the thread that waits for the
// message, with no announcement and no I/O thread in between. That needs the receives in the
// order ProcessGroup's point-to-point promises (docs/speed.md has the measurements).
// GlooMessages::IoThread keeps every message on the I/O thread, for comparison.
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
struct GlooAbandonedSends;

enum class GlooMessages { CallerThread, IoThread };

class GlooProcessGroup : public ProcessGroup {
 public:
  // `host`: the address this rank's TCP device binds to and advertises to its peers.
  GlooProcessGroup(int rank, int size, gloo::rendezvous::Store& store, std::chrono::milliseconds timeout,
                   const std::string& host = "127.0.0.1",
                   GlooMessages messages = GlooMessages::CallerThread);
  GlooProcessGroup(int rank, int size, StoreClient& store, std::chrono::milliseconds timeout,
                   const std::string& host = "127.0.0.1",
                   GlooMessages messages = GlooMessages::CallerThread);
  ~GlooProcessGroup() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string backend() const override { return "gloo"; }

  std::unique_ptr<Request> isend(std::span<const float> data, int dst, int tag) override;
  std::unique_ptr<Request> irecv(std::span<float> data, int src, int tag) override;

  void broadcast(std::span<float> data, int root) override;
  void barrier() override;
  void allreduce_native(std::span<float> data) override;
  bool reads_when_waited() const override { return direct(); }

 private:
  void connect(gloo::rendezvous::Store& store, const std::string& host);
  void connect_direct_pairs(gloo::rendezvous::Store& store);
  bool direct() const;
  void check_peer(int peer, const char* what) const;

  int rank_;
  int size_;
  GlooMessages messages_;
  std::shared_ptr<gloo::transport::Device> device_;
  std::shared_ptr<gloo::Context> context_;  // pairs served by gloo's I/O thread
  // Direct pairs (point-to-point): messages from the lower rank of two to the higher go over
  // `upward_`, the others over `downward_`; each pair's receiving end is synchronous.
  std::shared_ptr<gloo::Context> upward_, downward_;
  // Declared after the pairs' contexts, so destroyed before them: a buffer leaves its pair's list.
  std::unique_ptr<GlooAbandonedSends> abandoned_;
};

// RINGLAB_GLOO_MESSAGES: "caller-thread" (the default, also when unset) or "io-thread".
// Throws InputError naming the variable for anything else, and for the earlier name
// RINGLAB_GLOO_SMALL_MESSAGES, set at all.
GlooMessages gloo_messages_from_env();

// The interface address to use for reaching `master_addr`: 127.0.0.1 for loopback or an empty
// address, otherwise the local address the kernel would route to it from.
std::string gloo_host_for(const std::string& master_addr);

}  // namespace ringlab

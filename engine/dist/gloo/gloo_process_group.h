#pragma once
// The gloo process group: gloo's TCP transport for point-to-point (unbound buffers) and gloo's
// own algorithms for broadcast, barrier and all-reduce. Ranks find each other through a store:
// ringlab's StoreClient (processes) or any gloo::rendezvous::Store (tests run ranks as threads
// with gloo::rendezvous::HashStore).
//
// After a timeout gloo closes every connection of the group ("Application timeout caused pair
// closure"), as PyTorch's gloo group does: a TimeoutError leaves the group unusable.
#include <chrono>
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

class GlooProcessGroup : public ProcessGroup {
 public:
  // `host`: the address this rank's TCP device binds to and advertises to its peers.
  GlooProcessGroup(int rank, int size, gloo::rendezvous::Store& store, std::chrono::milliseconds timeout,
                   const std::string& host = "127.0.0.1");
  GlooProcessGroup(int rank, int size, StoreClient& store, std::chrono::milliseconds timeout,
                   const std::string& host = "127.0.0.1");
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
  void check_peer(int peer, const char* what) const;

  int rank_;
  int size_;
  std::shared_ptr<gloo::transport::Device> device_;
  std::shared_ptr<gloo::Context> context_;
};

// The interface address to use for reaching `master_addr`: 127.0.0.1 for loopback or an empty
// address, otherwise the local address the kernel would route to it from.
std::string gloo_host_for(const std::string& master_addr);

}  // namespace ringlab

#include "engine/dist/gloo/gloo_process_group.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/buffer.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "engine/dist/gloo/gloo_check.h"
#include "engine/dist/gloo/gloo_store_adapter.h"
#include "engine/net/store.h"

namespace ringlab {

// Direct sends given up on before gloo had written them out (GlooDirectRequest's destructor).
struct GlooAbandonedSends {
  std::mutex mutex;
  std::vector<std::unique_ptr<gloo::transport::Buffer>> buffers;
};

namespace {

// gloo names a message by a 64-bit slot. Its own collectives put a small prefix (1..8) in the top
// byte; point-to-point messages of this group use their own prefix, with the tag below it, so
// they can never be taken for a piece of a gloo collective.
constexpr uint64_t kPointToPointPrefix = uint64_t{0x52} << 56;

uint64_t slot_for(int tag) { return kPointToPointPrefix | (uint64_t{static_cast<uint32_t>(tag)} << 24); }

class GlooRequest : public Request {
 public:
  GlooRequest(std::unique_ptr<gloo::transport::UnboundBuffer> buffer, bool is_send, int rank, int peer)
      : buffer_(std::move(buffer)), is_send_(is_send), rank_(rank), peer_(peer) {}

  void wait(std::chrono::milliseconds timeout) override {
    const ErrorContext ctx{rank_, is_send_ ? "send" : "recv", -1};
    bool completed = false;
    RINGLAB_GLOO_CHECK(completed = is_send_ ? buffer_->waitSend(timeout) : buffer_->waitRecv(timeout),
                       ctx);
    if (!completed)
      throw Error(ctx, std::string(is_send_ ? "send to" : "receive from") + " rank " +
                           std::to_string(peer_) + " was aborted");
  }

 private:
  std::unique_ptr<gloo::transport::UnboundBuffer> buffer_;
  bool is_send_;
  int rank_, peer_;
};

// A message over a direct pair: a send was written (or queued for gloo's
// I/O thread) by the calling thread before isend returned, and a receive is read from the
// socket by the thread that waits for it. A receive's wait is bounded by the pair's socket
// timeout (the group's timeout when it connected), not by the argument.
class GlooDirectRequest : public Request {
 public:
  GlooDirectRequest(std::unique_ptr<gloo::transport::Buffer> buffer, bool is_send, int rank,
                    gloo::transport::Pair* pair, GlooAbandonedSends* abandoned)
      : buffer_(std::move(buffer)), is_send_(is_send), rank_(rank), pair_(pair), abandoned_(abandoned) {}

  // A send given up on (its collective failed and is unwinding) may still wait in gloo's queue
  // for the I/O thread, which would go on writing from this buffer and from the caller's memory
  // after both are gone. So its pair is closed first (the collective has failed anyway), and the
  // buffer, which the closed pair still lists, is kept until the group goes.
  ~GlooDirectRequest() override {
    if (!is_send_ || done_) return;
    try {
      pair_->close();
      std::lock_guard<std::mutex> lock(abandoned_->mutex);
      abandoned_->buffers.push_back(std::move(buffer_));
    } catch (...) {
      // Closing failed: keep the buffer alive anyway rather than free what gloo may still use.
      static_cast<void>(buffer_.release());
    }
  }

  void wait(std::chrono::milliseconds) override {
    RINGLAB_GLOO_CHECK(is_send_ ? buffer_->waitSend() : buffer_->waitRecv(),
                       (ErrorContext{rank_, is_send_ ? "send" : "recv", -1}));
    done_ = true;
  }

 private:
  std::unique_ptr<gloo::transport::Buffer> buffer_;
  bool is_send_;
  int rank_;
  gloo::transport::Pair* pair_;
  GlooAbandonedSends* abandoned_;
  bool done_ = false;
};

}  // namespace

GlooProcessGroup::GlooProcessGroup(int rank, int size, gloo::rendezvous::Store& store,
                                   std::chrono::milliseconds timeout, const std::string& host,
                                   GlooMessages messages)
    : rank_(rank), size_(size), messages_(messages) {
  timeout_ = timeout;
  connect(store, host);
}

GlooProcessGroup::GlooProcessGroup(int rank, int size, StoreClient& store,
                                   std::chrono::milliseconds timeout, const std::string& host,
                                   GlooMessages messages)
    : rank_(rank), size_(size), messages_(messages) {
  timeout_ = timeout;
  GlooStoreAdapter adapter(store);
  connect(adapter, host);
}

GlooProcessGroup::~GlooProcessGroup() = default;  // the abandoned sends go first, while their pairs exist

void GlooProcessGroup::connect(gloo::rendezvous::Store& store, const std::string& host) {
  const ErrorContext ctx{rank_, "gloo.connect", -1};
  if (size_ < 1 || rank_ < 0 || rank_ >= size_)
    throw InputError(ctx, "rank " + std::to_string(rank_) + " is not in a world of " + std::to_string(size_));
  gloo::transport::tcp::attr attr;
  // GLOO_SOCKET_IFNAME names an interface, as in PyTorch; otherwise bind to `host`.
  if (const char* iface = std::getenv("GLOO_SOCKET_IFNAME"); iface && *iface)
    attr.iface = iface;
  else
    attr.hostname = host;
  RINGLAB_GLOO_CHECK(device_ = gloo::transport::tcp::CreateDevice(attr), ctx);
  auto context = std::make_shared<gloo::rendezvous::Context>(rank_, size_);
  context->setTimeout(timeout_);
  RINGLAB_GLOO_CHECK(context->connectFullMesh(store, device_), ctx);
  context_ = std::move(context);
  if (messages_ == GlooMessages::CallerThread) connect_direct_pairs(store);
}

// Two more full meshes on the same device, one per direction of travel. A pair's end that
// receives is switched to gloo's synchronous mode (read by the thread that waits); the end that
// sends stays asynchronous, so that a write the socket cannot take at once is finished by gloo's
// I/O thread and two ranks sending to each other at the same time never both wait in a write.
// gloo's unbound buffers and its own collectives need pairs served by the I/O thread at both
// ends, so those keep the first mesh.
void GlooProcessGroup::connect_direct_pairs(gloo::rendezvous::Store& store) {
  const ErrorContext ctx{rank_, "gloo.connect", -1};
  const auto mesh = [&](const char* prefix, bool receive_from_lower) {
    gloo::rendezvous::PrefixStore prefixed(prefix, store);
    auto m = std::make_shared<gloo::rendezvous::Context>(rank_, size_);
    m->setTimeout(timeout_);
    RINGLAB_GLOO_CHECK(m->connectFullMesh(prefixed, device_), ctx);
    for (int peer = 0; peer < size_; ++peer)
      if (peer != rank_ && (peer < rank_) == receive_from_lower) RINGLAB_GLOO_CHECK(m->getPair(peer)->setSync(true, false), ctx);
    return m;
  };
  upward_ = mesh("upward", true);
  downward_ = mesh("downward", false);
  abandoned_ = std::make_unique<GlooAbandonedSends>();
}

bool GlooProcessGroup::direct() const { return upward_ != nullptr; }

void GlooProcessGroup::check_peer(int peer, const char* what) const {
  if (peer < 0 || peer >= size_ || peer == rank_)
    throw Error({rank_, what, -1}, "invalid peer rank " + std::to_string(peer) + " in a world of " +
                                       std::to_string(size_));
}

std::unique_ptr<Request> GlooProcessGroup::isend(std::span<const float> data, int dst, int tag) {
  check_peer(dst, "send");
  if (direct()) {
    std::unique_ptr<gloo::transport::Buffer> buffer;
    auto* ptr = const_cast<float*>(data.data());
    auto& pair = (rank_ < dst ? upward_ : downward_)->getPair(dst);
    RINGLAB_GLOO_CHECK(buffer = pair->createSendBuffer(tag, ptr, data.size_bytes());
                       buffer->send(0, data.size_bytes(), 0), (ErrorContext{rank_, "send", -1}));
    return std::make_unique<GlooDirectRequest>(std::move(buffer), true, rank_, pair.get(), abandoned_.get());
  }
  std::unique_ptr<gloo::transport::UnboundBuffer> buffer;
  // gloo's buffers are read-write; a send only reads from it.
  auto* ptr = const_cast<float*>(data.data());
  RINGLAB_GLOO_CHECK(buffer = context_->createUnboundBuffer(ptr, data.size_bytes());
                     buffer->send(dst, slot_for(tag), 0, data.size_bytes()),
                     (ErrorContext{rank_, "send", -1}));
  return std::make_unique<GlooRequest>(std::move(buffer), true, rank_, dst);
}

std::unique_ptr<Request> GlooProcessGroup::irecv(std::span<float> data, int src, int tag) {
  check_peer(src, "recv");
  if (direct()) {
    // Registered under its tag; read only when waited for, in the order the peer sent.
    std::unique_ptr<gloo::transport::Buffer> buffer;
    auto& pair = (src < rank_ ? upward_ : downward_)->getPair(src);
    RINGLAB_GLOO_CHECK(buffer = pair->createRecvBuffer(tag, data.data(), data.size_bytes()),
                       (ErrorContext{rank_, "recv", -1}));
    return std::make_unique<GlooDirectRequest>(std::move(buffer), false, rank_, pair.get(), abandoned_.get());
  }
  std::unique_ptr<gloo::transport::UnboundBuffer> buffer;
  RINGLAB_GLOO_CHECK(buffer = context_->createUnboundBuffer(data.data(), data.size_bytes());
                     buffer->recv(src, slot_for(tag), 0, data.size_bytes()),
                     (ErrorContext{rank_, "recv", -1}));
  return std::make_unique<GlooRequest>(std::move(buffer), false, rank_, src);
}

void GlooProcessGroup::broadcast(std::span<float> data, int root) {
  const ErrorContext ctx{rank_, "broadcast", -1};
  if (root < 0 || root >= size_) throw Error(ctx, "invalid root rank " + std::to_string(root));
  if (data.empty() || size_ == 1) return;
  gloo::BroadcastOptions opts(context_);
  opts.setOutput(data.data(), data.size());
  opts.setRoot(root);
  opts.setTimeout(timeout_);
  RINGLAB_GLOO_CHECK(gloo::broadcast(opts), ctx);
}

void GlooProcessGroup::barrier() {
  gloo::BarrierOptions opts(context_);
  opts.setTimeout(timeout_);
  RINGLAB_GLOO_CHECK(gloo::barrier(opts), (ErrorContext{rank_, "barrier", -1}));
}

void GlooProcessGroup::allreduce_native(std::span<float> data) {
  if (data.empty() || size_ == 1) return;
  gloo::AllreduceOptions opts(context_);
  opts.setOutput(data.data(), data.size());
  opts.setReduceFunction(
      static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));
  opts.setTimeout(timeout_);
  RINGLAB_GLOO_CHECK(gloo::allreduce(opts), (ErrorContext{rank_, "gloo.allreduce", -1}));
}

GlooMessages gloo_messages_from_env() {
  // The setting's earlier name, which now covers every message, not only small ones: refused by
  // name rather than ignored, so a script that sets it does not measure the other path unawares.
  if (const char* old = std::getenv("RINGLAB_GLOO_SMALL_MESSAGES"))
    throw InputError(std::string("RINGLAB_GLOO_SMALL_MESSAGES='") + old +
                     "': the setting is now RINGLAB_GLOO_MESSAGES (same values: caller-thread or io-thread)");
  const char* value = std::getenv("RINGLAB_GLOO_MESSAGES");
  const std::string v = value ? value : "";
  if (v.empty() || v == "caller-thread") return GlooMessages::CallerThread;
  if (v == "io-thread") return GlooMessages::IoThread;
  throw InputError("RINGLAB_GLOO_MESSAGES='" + v + "': expected caller-thread or io-thread");
}

std::string gloo_host_for(const std::string& master_addr) {
  if (master_addr.empty() || master_addr == "localhost" || master_addr.rfind("127.", 0) == 0)
    return "127.0.0.1";
  // Ask the kernel which local address it would use to reach the master: connecting a UDP
  // socket sends nothing, it only picks the route.
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(master_addr.c_str(), "9", &hints, &found) != 0 || !found) return "127.0.0.1";
  std::string result = "127.0.0.1";
  const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in local{};
  socklen_t len = sizeof(local);
  if (fd >= 0 && ::connect(fd, found->ai_addr, found->ai_addrlen) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0) {
    char text[INET_ADDRSTRLEN] = {};
    if (inet_ntop(AF_INET, &local.sin_addr, text, sizeof(text))) result = text;
  }
  if (fd >= 0) ::close(fd);
  freeaddrinfo(found);
  return result;
}

}  // namespace ringlab

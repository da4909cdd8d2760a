#pragma once
// A process group: this process's rank among `size` peers and the ways to talk to them.
// Backends (dist/gloo, dist/mpi, dist/nccl) implement point-to-point and their own all-reduce;
// the ring all-reduce (dist/ring_allreduce.h) is written once on top of point-to-point.
#include <chrono>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace ringlab {

// An outstanding send or receive. wait() throws TimeoutError when the timeout passes
// and Error when the transfer failed (peer gone, connection dropped). A message over gloo's
// direct pairs is bounded by the group's timeout instead (its socket carries it): callers
// that want another bound for one wait use a group made with that timeout.
class Request {
 public:
  virtual ~Request() = default;
  virtual void wait(std::chrono::milliseconds timeout) = 0;
};

class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string backend() const = 0;  // "gloo", "mpi", "nccl", "local"

  // Point-to-point on float32 buffers. The buffer must stay alive until wait() returns.
  // `tag` tells apart concurrent transfers between the same pair (ring step, segment).
  // Messages from one peer are waited for in the order that peer sent them, each receive posted
  // before any later message from that peer is waited for (the ring, whose every rank forwards
  // what it receives in the order it received it; the collective check; the ping-pong). A
  // backend may then read a message on the thread that waits for it, straight from the
  // connection, instead of handing it over from an I/O thread (gloo: gloo_process_group.h).
  virtual std::unique_ptr<Request> isend(std::span<const float> data, int dst, int tag) = 0;
  virtual std::unique_ptr<Request> irecv(std::span<float> data, int src, int tag) = 0;

  virtual void broadcast(std::span<float> data, int root) = 0;
  virtual void barrier() = 0;
  // The backend's own all-reduce (sum), in place: gloo::allreduce, MPI_Allreduce, ncclAllReduce.
  virtual void allreduce_native(std::span<float> data) = 0;

  // Memory hooks so the ring can run where the buffers live. CPU backends use host memory and
  // these defaults; the NCCL group's buffers are device pointers and it overrides all three.
  // acc[i] += incoming[i]
  virtual void reduce_add(std::span<float> acc, std::span<const float> incoming);
  // A scratch buffer of at least n floats owned by the group, valid until the next call.
  virtual std::span<float> scratch(size_t n);
  // Copies a (possibly device) span into host memory, for recording chunk values.
  virtual void copy_to_host(std::span<const float> src, float* dst);

  // Whether a posted receive's data is read only when it is waited for (gloo's direct pairs),
  // not as it arrives.
  virtual bool reads_when_waited() const { return false; }

  std::chrono::milliseconds timeout() const { return timeout_; }
  void set_timeout(std::chrono::milliseconds t) { timeout_ = t; }

  // Blocking helpers over isend/irecv.
  void send(std::span<const float> data, int dst, int tag) { isend(data, dst, tag)->wait(timeout_); }
  void recv(std::span<float> data, int src, int tag) { irecv(data, src, tag)->wait(timeout_); }

 protected:
  std::chrono::milliseconds timeout_{60000};
  std::vector<float> scratch_;
};

// Which backends this build has, and why the others are missing.
struct BackendInfo {
  std::string name;
  bool available = false;
  std::string reason;  // why not, when unavailable
};
std::vector<BackendInfo> list_backends();
// Throws InputError naming the backend and listing the available ones when `name` cannot run.
void require_backend(const std::string& name);

}  // namespace ringlab

#include "engine/cuda/nccl/nccl_process_group.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>

#include <fmt/core.h>

#include "engine/cuda/cuda_check.h"
#include "engine/cuda/cuda_device.h"
#include "engine/cuda/cuda_wait.h"
#include "engine/cuda/vector_ops.h"
#include "engine/cuda/nccl/nccl_availability.h"
#include "engine/net/store.h"

namespace ringlab {

// One recorded isend/irecv. `batch` is set once it has been issued.
struct NcclProcessGroup::PendingOp {
  bool is_send = false;
  float* data = nullptr;
  size_t count = 0;
  int peer = 0;
  int tag = 0;
  bool cancelled = false;  // its Request was dropped before it was issued
  std::shared_ptr<Batch> batch;
};

// The operations issued together in one ncclGroupStart/End, bracketed by two CUDA events.
struct NcclProcessGroup::Batch {
  cudaEvent_t start = nullptr, end = nullptr;
  bool done = false;
  ~Batch() {
    if (start) cudaEventDestroy(start);
    if (end) cudaEventDestroy(end);
  }
};

class NcclRequest : public Request {
 public:
  NcclRequest(NcclProcessGroup& group, std::shared_ptr<NcclProcessGroup::PendingOp> op)
      : group_(group), op_(std::move(op)) {}
  ~NcclRequest() override {
    if (!op_->batch) op_->cancelled = true;
  }
  void wait(std::chrono::milliseconds timeout) override {
    if (op_->count == 0) return;  // both sides skip empty transfers: nothing was issued
    if (!op_->batch) group_.flush_pending(op_->tag);
    group_.wait_batch(*op_->batch, timeout, *op_);
  }

 private:
  NcclProcessGroup& group_;
  std::shared_ptr<NcclProcessGroup::PendingOp> op_;
};

namespace {

int local_rank_from_environment(int fallback) {
  const char* text = std::getenv("LOCAL_RANK");
  if (!text || !*text) return fallback;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (*end != '\0' || value < 0 || value > 1 << 20)
    throw InputError(fmt::format("LOCAL_RANK must be a non-negative integer; got '{}'", text));
  return static_cast<int>(value);
}

double elapsed_us(cudaEvent_t start, cudaEvent_t end) {
  float ms = 0.0f;
  RINGLAB_CUDA_CHECK(cudaEventElapsedTime(&ms, start, end));
  return static_cast<double>(ms) * 1000.0;
}

}  // namespace

// ---- setup and teardown -------------------------------------------------------------------

NcclProcessGroup::NcclProcessGroup(StoreClient& store, int rank, int size, NcclOptions options)
    : rank_(rank), size_(size) {
  timeout_ = options.timeout;
  if (size < 1 || rank < 0 || rank >= size)
    throw InputError(fmt::format("NCCL group: rank {} is outside a world of {}", rank, size));
  const CudaAvailability a = nccl_availability(size);
  if (!a.usable) throw Error(context("nccl.init"), "the NCCL backend cannot run here: " + a.reason);
  device_ = select_cuda_device(options.local_rank >= 0 ? options.local_rank : local_rank_from_environment(rank));
  try {
    RINGLAB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    RINGLAB_CUDA_CHECK(cudaEventCreate(&collective_start_));
    RINGLAB_CUDA_CHECK(cudaEventCreate(&collective_end_));
    barrier_buffer_.reserve_bytes(sizeof(float));
    init_communicator(store, options.store_key);
  } catch (...) {
    abort_communicator();
    release();  // a constructor that throws gets no destructor
    throw;
  }
}

void NcclProcessGroup::init_communicator(StoreClient& store, const std::string& key) {
  const ErrorContext ctx = context("nccl.init");
  // All ranks share one machine: keep NCCL's bootstrap sockets on the loopback interface
  // unless the user chose one. NCCL reads it once, at its first call in the process; the
  // once-flag also keeps thread-ranks (the tests) from racing on the environment.
  static std::once_flag loopback_only;
  std::call_once(loopback_only, [] { setenv("NCCL_SOCKET_IFNAME", "lo", 0); });
  ncclUniqueId id{};
  if (rank_ == 0) {
    RINGLAB_NCCL_CHECK(ncclGetUniqueId(&id), ctx);
    store.set(key, std::vector<uint8_t>(id.internal, id.internal + sizeof(id.internal)));
  } else {
    const std::vector<uint8_t> bytes = store.get(key);
    if (bytes.size() != sizeof(id.internal))
      throw Error(ctx, fmt::format("store key '{}' holds {} bytes, not an NCCL unique id ({} bytes)", key,
                                   bytes.size(), sizeof(id.internal)));
    std::memcpy(id.internal, bytes.data(), bytes.size());
  }
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;  // return at once; we poll, so a missing rank becomes a timeout
  RINGLAB_NCCL_CHECK(ncclCommInitRankConfig(&comm_, size_, id, rank_, &config), ctx);
  settle(ctx, timeout_, fmt::format("joining the NCCL communicator of {} ranks", size_));
}

NcclProcessGroup::~NcclProcessGroup() {
  cudaSetDevice(device_);
  pending_.clear();
  if (comm_) {
    // Finalize flushes outstanding work; bounded, and a communicator that will not finish
    // (a peer died) is aborted instead. Errors cannot leave a destructor.
    const auto limit = std::min(timeout_, std::chrono::milliseconds(10000));
    ncclResult_t state = ncclCommFinalize(comm_);
    const bool finished = (state == ncclSuccess || state == ncclInProgress) && poll_until([&] {
      if (ncclCommGetAsyncError(comm_, &state) != ncclSuccess) state = ncclInternalError;
      return state != ncclInProgress;
    }, limit);
    if (finished && state == ncclSuccess)
      ncclCommDestroy(comm_);
    else
      ncclCommAbort(comm_);
    comm_ = nullptr;
  }
  release();
}

void NcclProcessGroup::release() noexcept {
  if (collective_start_) cudaEventDestroy(collective_start_);
  if (collective_end_) cudaEventDestroy(collective_end_);
  if (stream_) cudaStreamDestroy(stream_);
  collective_start_ = collective_end_ = nullptr;
  stream_ = nullptr;
}

// ---- waiting ------------------------------------------------------------------------------

void NcclProcessGroup::use_device() const { RINGLAB_CUDA_CHECK(cudaSetDevice(device_)); }

void NcclProcessGroup::ensure_usable(const ErrorContext& ctx) const {
  if (aborted_)
    throw Error(ctx, "the NCCL communicator was aborted after an earlier failure; this group cannot be used again");
}

void NcclProcessGroup::abort_communicator() noexcept {
  if (comm_) ncclCommAbort(comm_);
  comm_ = nullptr;
  aborted_ = true;
  pending_.clear();
}

void NcclProcessGroup::settle(const ErrorContext& ctx, std::chrono::milliseconds timeout, const std::string& what) {
  ncclResult_t state = ncclInProgress;
  const bool settled = poll_until([&] {
    RINGLAB_NCCL_CHECK(ncclCommGetAsyncError(comm_, &state), ctx);
    return state != ncclInProgress;
  }, timeout);
  if (!settled) {
    abort_communicator();
    throw TimeoutError(ctx, fmt::format("{}: not done within {} ms (is every rank running?); NCCL communicator aborted",
                                        what, timeout.count()));
  }
  if (state != ncclSuccess) {
    abort_communicator();
    cuda_detail::throw_nccl_error(state, ctx, what.c_str(), __FILE__, __LINE__);
  }
}

void NcclProcessGroup::wait_on_gpu(cudaEvent_t done_event, const ErrorContext& ctx, std::chrono::milliseconds timeout,
                                   const std::string& what) {
  ncclResult_t state = ncclSuccess;
  const bool done = poll_until([&] {
    // An asynchronous NCCL failure (a peer's connection closed, ...) ends the wait at once,
    // instead of letting the GPU spin until the timeout.
    RINGLAB_NCCL_CHECK(ncclCommGetAsyncError(comm_, &state), ctx);
    if (state != ncclSuccess && state != ncclInProgress) return true;
    return cuda_event_done(done_event);
  }, timeout);
  if (done && state != ncclSuccess && state != ncclInProgress) {
    abort_communicator();
    cuda_detail::throw_nccl_error(state, ctx, what.c_str(), __FILE__, __LINE__);
  }
  if (!done) {
    abort_communicator();
    throw TimeoutError(ctx, fmt::format("{} did not complete within {} ms; NCCL communicator aborted", what,
                                        timeout.count()));
  }
}

void NcclProcessGroup::synchronize(const char* what) {
  ensure_usable(context(what));
  RINGLAB_CUDA_CHECK(cudaEventRecord(collective_end_, stream_));
  wait_on_gpu(collective_end_, context(what), timeout_, std::string("waiting for the GPU in ") + what);
}

// ---- point-to-point -----------------------------------------------------------------------

std::unique_ptr<Request> NcclProcessGroup::record(bool is_send, float* data, size_t count, int peer, int tag) {
  const ErrorContext ctx = context(is_send ? "nccl.isend" : "nccl.irecv");
  ensure_usable(ctx);
  if (peer < 0 || peer >= size_)
    throw Error(ctx, fmt::format("peer rank {} is outside a world of {}", peer, size_));
  if (count > 0 && !cuda::is_device_memory(data))
    throw Error(ctx, fmt::format("NCCL sends and receives need GPU memory, but the buffer for rank {} is in host memory",
                                 peer));
  auto op = std::make_shared<PendingOp>();
  *op = PendingOp{is_send, data, count, peer, tag, false, nullptr};
  if (count > 0) pending_.push_back(op);
  return std::make_unique<NcclRequest>(*this, std::move(op));
}

std::unique_ptr<Request> NcclProcessGroup::isend(std::span<const float> data, int dst, int tag) {
  // NCCL takes a non-const pointer for the send buffer too, and only reads it.
  return record(true, const_cast<float*>(data.data()), data.size(), dst, tag);
}

std::unique_ptr<Request> NcclProcessGroup::irecv(std::span<float> data, int src, int tag) {
  return record(false, data.data(), data.size(), src, tag);
}

void NcclProcessGroup::flush_pending(int max_tag) {
  const ErrorContext ctx = context("nccl.group");
  ensure_usable(ctx);
  use_device();
  // Everything recorded with a tag up to max_tag, grouped by tag, tags ascending (stable, so
  // equal tags keep their posting order); the rest stays recorded.
  std::vector<std::shared_ptr<PendingOp>> due, later;
  for (auto& op : pending_) {
    if (op->cancelled) continue;
    (op->tag <= max_tag ? due : later).push_back(op);
  }
  pending_ = std::move(later);
  std::stable_sort(due.begin(), due.end(), [](const auto& a, const auto& b) { return a->tag < b->tag; });
  for (size_t first = 0; first < due.size();) {
    size_t last = first;
    while (last < due.size() && due[last]->tag == due[first]->tag) ++last;
    issue_group({due.begin() + first, due.begin() + last});
    first = last;
  }
}

void NcclProcessGroup::issue_group(const std::vector<std::shared_ptr<PendingOp>>& ops) {
  const ErrorContext ctx = context("nccl.group");
  auto batch = std::make_shared<Batch>();
  RINGLAB_CUDA_CHECK(cudaEventCreate(&batch->start));
  RINGLAB_CUDA_CHECK(cudaEventCreate(&batch->end));
  RINGLAB_CUDA_CHECK(cudaEventRecord(batch->start, stream_));
  RINGLAB_NCCL_CHECK(ncclGroupStart(), ctx);
  try {
    for (const auto& op : ops) {
      if (op->is_send)
        RINGLAB_NCCL_CHECK(ncclSend(op->data, op->count, ncclFloat, op->peer, comm_, stream_), ctx);
      else
        RINGLAB_NCCL_CHECK(ncclRecv(op->data, op->count, ncclFloat, op->peer, comm_, stream_), ctx);
    }
  } catch (...) {
    ncclGroupEnd();  // a group must be closed even when a call inside it failed
    abort_communicator();
    throw;
  }
  RINGLAB_NCCL_CHECK(ncclGroupEnd(), ctx);
  // Non-blocking: the group may still be being enqueued; the end event must go behind it.
  settle(ctx, timeout_, fmt::format("issuing {} send/receive operations (tag {})", ops.size(), ops.front()->tag));
  RINGLAB_CUDA_CHECK(cudaEventRecord(batch->end, stream_));
  for (auto& op : ops) op->batch = batch;
}

void NcclProcessGroup::wait_batch(Batch& batch, std::chrono::milliseconds timeout, const PendingOp& op) {
  if (batch.done) return;
  const ErrorContext ctx = context(op.is_send ? "nccl.send" : "nccl.recv");
  ensure_usable(ctx);
  use_device();
  const std::string what = op.is_send ? fmt::format("send of {} floats to rank {} (tag {})", op.count, op.peer, op.tag)
                                      : fmt::format("receive of {} floats from rank {} (tag {})", op.count, op.peer, op.tag);
  wait_on_gpu(batch.end, ctx, timeout, what);
  batch.done = true;
  last_transfer_gpu_us_ = elapsed_us(batch.start, batch.end);
}

// ---- collectives --------------------------------------------------------------------------

template <typename Enqueue>
void NcclProcessGroup::run_collective(const char* name, Enqueue&& enqueue) {
  const ErrorContext ctx = context(name);
  ensure_usable(ctx);
  use_device();
  flush_pending(std::numeric_limits<int>::max());  // program order: what was recorded goes first
  RINGLAB_CUDA_CHECK(cudaEventRecord(collective_start_, stream_));
  RINGLAB_NCCL_CHECK(enqueue(), ctx);
  settle(ctx, timeout_, std::string("issuing ") + name);
  RINGLAB_CUDA_CHECK(cudaEventRecord(collective_end_, stream_));
  wait_on_gpu(collective_end_, ctx, timeout_, name);
  last_collective_gpu_us_ = elapsed_us(collective_start_, collective_end_);
}

template <typename Body>
void NcclProcessGroup::on_device(std::span<float> data, const char* what, Body&& body) {
  use_device();
  if (cuda::is_device_memory(data.data())) {
    body(data.data());
    return;
  }
  // Host memory (a vote among ranks, a benchmark's bookkeeping): NCCL only reads and writes
  // GPU memory, so the values make a round trip through a device buffer.
  if (!staging_buffer_.data() || data.size_bytes() > staging_buffer_.capacity_bytes()) {
    synchronize(what);  // the old buffer is freed: nothing queued may still use it
    staging_buffer_.reserve_bytes(data.size_bytes());
  }
  float* d = staging_buffer_.floats();
  synchronize(what);  // a copy from pageable memory would otherwise wait without a timeout
  RINGLAB_CUDA_CHECK(cudaMemcpyAsync(d, data.data(), data.size_bytes(), cudaMemcpyHostToDevice, stream_));
  body(d);
  RINGLAB_CUDA_CHECK(cudaMemcpyAsync(data.data(), d, data.size_bytes(), cudaMemcpyDeviceToHost, stream_));
  synchronize(what);
}

void NcclProcessGroup::broadcast(std::span<float> data, int root) {
  if (root < 0 || root >= size_)
    throw Error(context("nccl.broadcast"), fmt::format("root rank {} is outside a world of {}", root, size_));
  if (data.empty()) return;  // every rank holds the same (empty) tensor: nothing to move
  on_device(data, "nccl.broadcast", [&](float* d) {
    run_collective("nccl.broadcast", [&] { return ncclBroadcast(d, d, data.size(), ncclFloat, root, comm_, stream_); });
  });
}

void NcclProcessGroup::barrier() {
  // NCCL has no barrier; an all-reduce of one float needs every rank, which is what a barrier is.
  float* one = barrier_buffer_.floats();
  run_collective("nccl.barrier", [&] { return ncclAllReduce(one, one, 1, ncclFloat, ncclSum, comm_, stream_); });
}

void NcclProcessGroup::allreduce_native(std::span<float> data) {
  if (data.empty()) return;
  on_device(data, "nccl.allreduce", [&](float* d) {
    run_collective("nccl.allreduce", [&] {
      return ncclAllReduce(d, d, data.size(), ncclFloat, ncclSum, comm_, stream_);
    });
  });
}

// ---- memory hooks: the ring's buffers live on the device ------------------------------------

void NcclProcessGroup::reduce_add(std::span<float> acc, std::span<const float> incoming) {
  const ErrorContext ctx = context("nccl.reduce_add");
  ensure_usable(ctx);
  if (acc.size() != incoming.size())
    throw Error(ctx, fmt::format("sizes differ: {} and {} floats", acc.size(), incoming.size()));
  if (acc.empty()) return;
  use_device();
  const bool acc_on_device = cuda::is_device_memory(acc.data());
  if (acc_on_device != cuda::is_device_memory(incoming.data()))
    throw Error(ctx, "one buffer is in GPU memory and the other in host memory");
  if (!acc_on_device) {
    ProcessGroup::reduce_add(acc, incoming);
    return;
  }
  // Operations still only recorded stay so: their wait issues them, after this kernel, which
  // is allowed (a buffer with a send or receive outstanding is not touched by the caller).
  cuda::add_inplace(acc.data(), incoming.data(), acc.size(), stream_);
}

std::span<float> NcclProcessGroup::scratch(size_t n) {
  use_device();
  if (!scratch_buffer_.data() || n * sizeof(float) > scratch_buffer_.capacity_bytes()) {
    // The old buffer is freed: make sure nothing queued still reads or writes it.
    synchronize("nccl.scratch");
    scratch_buffer_.reserve_bytes(n * sizeof(float));
  }
  return {scratch_buffer_.floats(), n};
}

void NcclProcessGroup::copy_to_host(std::span<const float> src, float* dst) {
  if (src.empty()) return;
  use_device();
  if (!cuda::is_device_memory(src.data())) {
    ProcessGroup::copy_to_host(src, dst);
    return;
  }
  // Wait with a timeout first; then the copy (to pageable memory) finds the stream idle.
  synchronize("nccl.copy_to_host");
  RINGLAB_CUDA_CHECK(cudaMemcpyAsync(dst, src.data(), src.size_bytes(), cudaMemcpyDeviceToHost, stream_));
  synchronize("nccl.copy_to_host");
}

}  // namespace ringlab

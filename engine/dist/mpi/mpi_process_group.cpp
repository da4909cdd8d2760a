#include "engine/dist/mpi/mpi_process_group.h"

#include <sched.h>

#include <climits>
#include <string>

#include "engine/dist/mpi/mpi_check.h"

namespace ringlab {

bool mpi_poll(MPI_Request& request, std::chrono::milliseconds timeout, int rank, const char* what,
              bool yield_when_idle) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  // MPI moves shared-memory data only while a rank is inside an MPI call, so waiting means
  // spinning on MPI_Test. With a core per rank that is the fastest way; with more ranks than
  // cores a spinning rank burns the time slice its peer needs to make progress, so then the
  // core is handed over on every idle turn (OpenMPI's own mpi_yield_when_idle does the same).
  for (int turn = 0;; ++turn) {
    int done = 0;
    RINGLAB_MPI_CHECK(MPI_Test(&request, &done, MPI_STATUS_IGNORE), (ErrorContext{rank, what, -1}));
    if (done) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    if (yield_when_idle && turn > 64) sched_yield();
  }
}

namespace {

// More ranks on this node than cores this process may run on?
bool node_is_oversubscribed(MPI_Comm comm, int rank) {
  MPI_Comm node = MPI_COMM_NULL;
  RINGLAB_MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node),
                    (ErrorContext{rank, "mpi.init", -1}));
  int local_ranks = 1;
  MPI_Comm_size(node, &local_ranks);
  MPI_Comm_free(&node);
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  const int cores = sched_getaffinity(0, sizeof(cpus), &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
  return local_ranks > cores;
}

}  // namespace

namespace {

class MpiRequest : public Request {
 public:
  MpiRequest(int rank, int peer, bool is_send, bool yield_when_idle)
      : rank_(rank), peer_(peer), is_send_(is_send), yield_when_idle_(yield_when_idle) {}
  ~MpiRequest() override {
    if (request == MPI_REQUEST_NULL) return;
    // Abandoned (timed out or never waited for): cancel it so MPI lets go of the buffer. A send
    // that already left cannot be cancelled; give it a moment, then free the handle.
    MPI_Cancel(&request);
    int done = 0;
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
    while (!done && std::chrono::steady_clock::now() < until) MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (!done) MPI_Request_free(&request);
  }

  void wait(std::chrono::milliseconds timeout) override {
    const char* what = is_send_ ? "send" : "recv";
    if (!mpi_poll(request, timeout, rank_, what, yield_when_idle_))
      throw TimeoutError({rank_, what, -1},
                         std::string(is_send_ ? "send to" : "receive from") + " rank " +
                             std::to_string(peer_) + " timed out after " +
                             std::to_string(timeout.count()) + " ms");
  }

  MPI_Request request = MPI_REQUEST_NULL;

 private:
  int rank_, peer_;
  bool is_send_;
  bool yield_when_idle_;
};

}  // namespace

MpiProcessGroup::MpiProcessGroup(std::chrono::milliseconds timeout) {
  timeout_ = timeout;
  const ErrorContext ctx{-1, "mpi.init", -1};
  int initialized = 0, finalized = 0;
  RINGLAB_MPI_CHECK(MPI_Initialized(&initialized), ctx);
  RINGLAB_MPI_CHECK(MPI_Finalized(&finalized), ctx);
  if (finalized) throw Error(ctx, "MPI was already finalized in this process; it cannot start twice");
  if (!initialized) {
    RINGLAB_MPI_CHECK(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &thread_level_), ctx);
    initialized_here_ = true;
  } else {
    RINGLAB_MPI_CHECK(MPI_Query_thread(&thread_level_), ctx);
  }
  RINGLAB_MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), ctx);
  // A private communicator: our tags can never match messages of other MPI users in the process.
  RINGLAB_MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), ctx);
  RINGLAB_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), ctx);
  RINGLAB_MPI_CHECK(MPI_Comm_rank(comm_, &rank_), ctx);
  RINGLAB_MPI_CHECK(MPI_Comm_size(comm_, &size_), ctx);
  yield_when_idle_ = node_is_oversubscribed(comm_, rank_);
  if (thread_level_ < MPI_THREAD_SERIALIZED)
    throw Error({rank_, "mpi.init", -1}, "the MPI library does not offer MPI_THREAD_SERIALIZED "
                                         "(DDP's communication thread and the training thread take turns calling it)");
  watchdog_ = std::make_unique<MpiWatchdog>();
}

MpiProcessGroup::~MpiProcessGroup() {
  watchdog_.reset();
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (initialized_here_ && !finalized) MPI_Finalize();
}

void MpiProcessGroup::check_peer(int peer, const char* what) const {
  if (peer < 0 || peer >= size_ || peer == rank_)
    throw Error({rank_, what, -1}, "invalid peer rank " + std::to_string(peer) + " in a world of " +
                                       std::to_string(size_));
}

int MpiProcessGroup::checked_count(size_t n, const char* what) const {
  if (n > static_cast<size_t>(INT_MAX))
    throw Error({rank_, what, -1}, std::to_string(n) + " floats is more than one MPI call can carry");
  return static_cast<int>(n);
}

std::unique_ptr<Request> MpiProcessGroup::isend(std::span<const float> data, int dst, int tag) {
  check_peer(dst, "send");
  auto req = std::make_unique<MpiRequest>(rank_, dst, true, yield_when_idle_);
  RINGLAB_MPI_CHECK(MPI_Isend(data.data(), checked_count(data.size(), "send"), MPI_FLOAT, dst, tag,
                              comm_, &req->request),
                    (ErrorContext{rank_, "send", -1}));
  return req;
}

std::unique_ptr<Request> MpiProcessGroup::irecv(std::span<float> data, int src, int tag) {
  check_peer(src, "recv");
  auto req = std::make_unique<MpiRequest>(rank_, src, false, yield_when_idle_);
  RINGLAB_MPI_CHECK(MPI_Irecv(data.data(), checked_count(data.size(), "recv"), MPI_FLOAT, src, tag,
                              comm_, &req->request),
                    (ErrorContext{rank_, "recv", -1}));
  return req;
}

void MpiProcessGroup::wait_collective(MPI_Request& request, const char* what) {
  // A collective request cannot be cancelled; after a timeout the group is unusable.
  if (!mpi_poll(request, timeout_, rank_, what, yield_when_idle_))
    throw TimeoutError({rank_, what, -1},
                       "not every rank took part within " + std::to_string(timeout_.count()) + " ms");
}

void MpiProcessGroup::broadcast(std::span<float> data, int root) {
  if (root < 0 || root >= size_) throw Error({rank_, "broadcast", -1}, "invalid root rank " + std::to_string(root));
  MPI_Request request = MPI_REQUEST_NULL;
  RINGLAB_MPI_CHECK(MPI_Ibcast(data.data(), checked_count(data.size(), "broadcast"), MPI_FLOAT, root,
                               comm_, &request),
                    (ErrorContext{rank_, "broadcast", -1}));
  wait_collective(request, "broadcast");
}

void MpiProcessGroup::barrier() {
  MPI_Request request = MPI_REQUEST_NULL;
  RINGLAB_MPI_CHECK(MPI_Ibarrier(comm_, &request), (ErrorContext{rank_, "barrier", -1}));
  wait_collective(request, "barrier");
}

void MpiProcessGroup::allreduce_native(std::span<float> data) {
  if (data.empty()) return;
  const int count = checked_count(data.size(), "MPI_Allreduce");
  MpiWatchdog::Armed guard(*watchdog_, timeout_, "MPI_Allreduce", rank_);
  RINGLAB_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, data.data(), count, MPI_FLOAT, MPI_SUM, comm_),
                    (ErrorContext{rank_, "MPI_Allreduce", -1}));
}

}  // namespace ringlab

#pragma once
// The OpenMPI process group: ranks come from MPI_COMM_WORLD (started by `mpirun`), point-to-point
// is MPI_Isend / MPI_Irecv, and the native all-reduce is MPI_Allreduce.
//
// Threads: the group asks for MPI_THREAD_SERIALIZED: more than one thread calls it (DDP's
// communication thread for the early buckets, the training thread for the last bucket, the
// votes and the join flag), but never two at once: the training thread calls only after
// DistributedDataParallel::finish() has waited for every bucket it handed over. MULTIPLE would
// put OpenMPI's locks around every call for concurrency that never happens (4 ranks on 2 cores:
// a bare MPI_Allreduce step 8-10% slower with it). The watchdog's MPI_Abort is the one call
// from a third thread, made to end the job. thread_level() says what the library granted.
//
// Lifetime: MPI can be initialized once per process. The group calls MPI_Init_thread when MPI
// is not initialized yet and MPI_Finalize in its destructor; after that no second group can be
// made in the same process.
#include "engine/dist/mpi/mpi_c.h"

#include <chrono>
#include <memory>

#include "engine/dist/mpi/mpi_watchdog.h"
#include "engine/dist/process_group.h"

namespace ringlab {

class MpiProcessGroup : public ProcessGroup {
 public:
  explicit MpiProcessGroup(std::chrono::milliseconds timeout);
  ~MpiProcessGroup() override;
  MpiProcessGroup(const MpiProcessGroup&) = delete;
  MpiProcessGroup& operator=(const MpiProcessGroup&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string backend() const override { return "mpi"; }
  int thread_level() const { return thread_level_; }

  std::unique_ptr<Request> isend(std::span<const float> data, int dst, int tag) override;
  std::unique_ptr<Request> irecv(std::span<float> data, int src, int tag) override;

  // Broadcast and barrier use MPI_Ibcast / MPI_Ibarrier polled until the timeout, so they
  // can fail with TimeoutError instead of blocking for ever.
  void broadcast(std::span<float> data, int root) override;
  void barrier() override;
  // MPI_Allreduce itself (what the benchmark compares the ring against), guarded by the
  // watchdog: MPI offers no way to time it out.
  void allreduce_native(std::span<float> data) override;

 private:
  void check_peer(int peer, const char* what) const;
  int checked_count(size_t n, const char* what) const;
  void wait_collective(MPI_Request& request, const char* what);

  bool initialized_here_ = false;
  int thread_level_ = MPI_THREAD_SINGLE;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  bool yield_when_idle_ = false;  // more ranks than cores on this node: waits yield the core
  std::unique_ptr<MpiWatchdog> watchdog_;
};

// Polls `request` with MPI_Test until it completes (true) or `timeout` passes (false); yields the
// core between tests when `yield_when_idle`.
bool mpi_poll(MPI_Request& request, std::chrono::milliseconds timeout, int rank, const char* what,
              bool yield_when_idle);

}  // namespace ringlab

#include "engine/dist/mpi/mpi_watchdog.h"

#include "engine/dist/mpi/mpi_c.h"

#include <cstdio>

#include "engine/core/clock.h"

namespace ringlab {

MpiWatchdog::MpiWatchdog() : thread_([this] { watch(); }) {}

MpiWatchdog::~MpiWatchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  thread_.join();
}

void MpiWatchdog::arm(std::chrono::milliseconds timeout, const char* what, int rank) {
  what_.store(what, std::memory_order_relaxed);
  rank_.store(rank, std::memory_order_relaxed);
  timeout_ms_.store(timeout.count(), std::memory_order_relaxed);
  deadline_ns_.store(now_ns() + std::chrono::nanoseconds(timeout).count(), std::memory_order_release);
}

void MpiWatchdog::disarm() { deadline_ns_.store(0, std::memory_order_release); }

void MpiWatchdog::watch() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_cv_.wait_for(lock, std::chrono::milliseconds(50), [this] { return stop_; })) {
    const int64_t deadline = deadline_ns_.load(std::memory_order_acquire);
    if (deadline == 0 || now_ns() < deadline) continue;
    std::fprintf(stderr, "rank %d: %s: timed out after %lld ms inside MPI; aborting the job\n",
                 rank_.load(), what_.load(), static_cast<long long>(timeout_ms_.load()));
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
}

}  // namespace ringlab

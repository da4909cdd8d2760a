#pragma once
// MPI's blocking collectives (MPI_Allreduce) cannot be cancelled or given a timeout. The
// watchdog is the timeout for them: arm it before the call, disarm it after; if the call is
// still inside MPI when the deadline passes, it prints what was stuck and aborts the job, so a
// lost peer ends the run with a message instead of hanging it.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace ringlab {

class MpiWatchdog {
 public:
  MpiWatchdog();
  ~MpiWatchdog();
  MpiWatchdog(const MpiWatchdog&) = delete;
  MpiWatchdog& operator=(const MpiWatchdog&) = delete;

  // `what` must outlive the armed period (a string literal).
  void arm(std::chrono::milliseconds timeout, const char* what, int rank);
  void disarm();

  // Armed for the lifetime of this object.
  class Armed {
   public:
    Armed(MpiWatchdog& dog, std::chrono::milliseconds timeout, const char* what, int rank) : dog_(dog) {
      dog_.arm(timeout, what, rank);
    }
    ~Armed() { dog_.disarm(); }
    Armed(const Armed&) = delete;
    Armed& operator=(const Armed&) = delete;

   private:
    MpiWatchdog& dog_;
  };

 private:
  void watch();

  // Arming is two relaxed stores, no system call: cheap enough for every small all-reduce.
  std::atomic<int64_t> deadline_ns_{0};  // 0: disarmed
  std::atomic<const char*> what_{""};
  std::atomic<int> rank_{-1};
  std::atomic<int64_t> timeout_ms_{0};
  std::mutex mutex_;
  std::condition_variable stop_cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace ringlab

#include "app/run_starter.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <exception>
#include <future>

#include <fmt/core.h>

#include "engine/core/error.h"
#include "engine/core/limits.h"

namespace ringlab::app {

RunStarter::RunStarter() { thread_ = start_thread("starting runs", [this] { loop(); }); }

RunStarter::~RunStarter() {
  {
    std::lock_guard lock(mutex_);
    quit_ = true;
  }
  work_.notify_all();
  thread_.join();
}

void RunStarter::loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    work_.wait(lock, [this] { return quit_ || task_; });
    if (task_) {
      std::function<void()> task = std::move(task_);
      task_ = nullptr;
      lock.unlock();
      task();
      lock.lock();
    } else if (quit_) {
      return;
    }
  }
}

std::unique_ptr<Controller> RunStarter::start(const ControllerOptions& options, EventSink& events,
                                              std::chrono::seconds patience) {
  // Shared with the task: should the wait below give up, the task still ends on its own and
  // the controller it made is stopped by whichever side lets go of it last.
  auto made = std::make_shared<std::promise<std::unique_ptr<Controller>>>();
  std::future<std::unique_ptr<Controller>> result = made->get_future();
  {
    std::lock_guard lock(mutex_);
    if (task_) throw Error("a run is already being started");
    task_ = [made, options, &events] {
      try {
        auto controller = std::make_unique<Controller>(options, events);
        controller->start();
        made->set_value(std::move(controller));
      } catch (...) {
        made->set_exception(std::current_exception());
      }
    };
  }
  work_.notify_all();
  if (result.wait_for(patience) != std::future_status::ready)
    throw TimeoutError(fmt::format("starting the run took longer than {} s", patience.count()));
  return result.get();
}

bool lower_drawing_priority() {
  // SCHED_IDLE: this thread runs only when no ordinary thread wants the core, and a worker that
  // wakes (its message arrived) takes the core at once. A lower nice value only shares the core
  // out differently, and the woken worker still waits for its turn: measured on 2 cores, 4 ranks
  // beside the window took 1.74x their step time at nice +5, 1.96x at +19, 1.33x in SCHED_IDLE.
  // Never starved: with 8 busy ranks on 2 cores a frame still took 23 ms (median), 209 ms (p95).
  sched_param none{};
  if (::sched_setscheduler(0, SCHED_IDLE, &none) == 0) return true;
  // Where SCHED_IDLE is refused (another kernel, a sandbox), the lowest share nice gives.
  const auto tid = static_cast<id_t>(::syscall(SYS_gettid));
  errno = 0;
  const int now = ::getpriority(PRIO_PROCESS, tid);
  if (errno != 0) return false;
  return ::setpriority(PRIO_PROCESS, tid, std::max(now, kFallbackNice)) == 0;
}

}  // namespace ringlab::app

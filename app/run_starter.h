#pragma once
// The app draws at a lower priority than the run it shows. On a machine with fewer cores than
// ranks plus one, drawing a frame competes with the workers for a core, and the workers' step
// time is what the app is there to show (bench/app_window.sh measures it with and without the
// window).
//
// On Linux a new thread or process takes the scheduling of the thread that starts it, and an
// ordinary user can lower a priority but not raise it again. So the app keeps one thread at the
// priority it was started with, the RunStarter, and starts every run from there: the
// controller's threads, and through them the workers, run at that priority. Then the thread
// that draws lowers its own (lower_drawing_priority), before it creates the GL context, so that
// the GL driver's own threads (Mesa's software renderer draws on several) take the lower one too.
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "engine/control/controller.h"

namespace ringlab::app {

class RunStarter {
 public:
  RunStarter();
  ~RunStarter();
  RunStarter(const RunStarter&) = delete;
  RunStarter& operator=(const RunStarter&) = delete;

  // Makes a controller for `options` and starts its run, on the starter's thread, and hands it
  // over. Throws what the controller threw, or a TimeoutError when starting took longer than
  // `patience` (the controller is then stopped once it has started).
  std::unique_ptr<Controller> start(const ControllerOptions& options, EventSink& events,
                                    std::chrono::seconds patience);

 private:
  void loop();

  std::mutex mutex_;
  std::condition_variable work_;
  std::function<void()> task_;
  bool quit_ = false;
  std::thread thread_;
};

// Where SCHED_IDLE is refused: the nice value the drawing thread takes instead.
inline constexpr int kFallbackNice = 19;
// Moves the calling thread (and what it starts later) to SCHED_IDLE, or else to nice
// kFallbackNice. Returns false, and changes nothing, where the system refuses both.
bool lower_drawing_priority();

}  // namespace ringlab::app

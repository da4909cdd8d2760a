#include "engine/runtime/step_votes.h"

#include <algorithm>
#include <span>

#include "engine/core/limits.h"
#include "engine/ddp/collective_check.h"
#include "engine/dist/store.h"
#include "engine/runtime/worker.h"

namespace ringlab {

StepVotes::StepVotes(ProcessGroup& group, Cadence cadence, bool check_collectives, StepVoteHooks hooks)
    : group_(group), cadence_(cadence), check_(check_collectives), hooks_(std::move(hooks)) {}

// Rank 0 looks only at what it knows without asking anybody: the stop key as its watcher last
// saw it, and its own queue of events.
Vote StepVotes::decide() const {
  if (hooks_.stop_requested && hooks_.stop_requested()) return Vote::Stop;
  if (hooks_.controller_behind && hooks_.controller_behind()) return Vote::WaitForController;
  return Vote::Go;
}

int64_t StepVotes::next_gap(int64_t step) {
  if (cadence_ == Cadence::EveryStep) return 1;
  const auto now = std::chrono::steady_clock::now();
  int64_t gap = 1;
  if (last_step_ >= 0 && step > last_step_) {
    const double per_step = std::chrono::duration<double>(now - last_vote_time_).count() / double(step - last_step_);
    const double wanted = std::chrono::duration<double>(kSpacing).count() / std::max(per_step, 1e-9);
    gap = static_cast<int64_t>(std::clamp(wanted, 1.0, double(kMaxGap)));
  }
  last_step_ = step;
  last_vote_time_ = now;
  return gap;
}

bool StepVotes::stop_here(int64_t step) {
  if (next_vote_ >= 0 && step < next_vote_) return false;
  // The vote itself and the gap to the next one travel together: {Vote, gap}. Both are small
  // whole numbers, exact in a float.
  float ballot[2] = {0.0f, 1.0f};
  if (group_.rank() == 0) {
    ballot[0] = static_cast<float>(decide());
    ballot[1] = static_cast<float>(next_gap(step));
  }
  if (group_.size() > 1) {
    if (check_ && group_.backend() != "nccl") ddp::check_collective(group_, ddp::stop_vote_fingerprint(step));
    group_.broadcast(std::span<float>(ballot, 2), 0);
  }
  const auto vote = static_cast<Vote>(static_cast<int>(ballot[0]));
  next_vote_ = step + std::max<int64_t>(1, static_cast<int64_t>(ballot[1]));
  if (vote == Vote::WaitForController) {
    if (hooks_.wait_for_controller) hooks_.wait_for_controller();
    next_vote_ = step + 1;  // look again at the next boundary: it may have asked to stop meanwhile
  }
  return vote == Vote::Stop;
}

// ---------------------------------------------------------------------------------------------

namespace {
constexpr std::chrono::milliseconds kWatchInterval(20);
}

StopWatch::StopWatch(const std::string& host, uint16_t port, const std::string& token,
                     std::chrono::milliseconds timeout, std::chrono::milliseconds patience)
    : store_(std::make_unique<StoreClient>(host, port, token, timeout, patience)) {
  thread_ = start_thread("watching for a stop request", [this] { loop(); });
}

StopWatch::~StopWatch() {
  {
    std::lock_guard lock(mutex_);
    quit_ = true;
  }
  quit_cv_.notify_all();
  thread_.join();
}

bool StopWatch::requested() const { return value_.load() != 0; }
bool StopWatch::for_change() const { return value_.load() == store_keys::kStopForChange; }

void StopWatch::loop() {
  try {
    std::unique_lock lock(mutex_);
    while (!quit_) {
      lock.unlock();
      if (store_->check({store_keys::kStop})) {
        const std::vector<uint8_t> value = store_->get(store_keys::kStop);
        value_ = value.empty() ? store_keys::kStopToEnd : value[0];
        return;
      }
      lock.lock();
      quit_cv_.wait_for(lock, kWatchInterval, [this] { return quit_; });
    }
  } catch (...) {
    // The controller is gone (its end of the connection closed): nobody is left to ask for a
    // stop, and the run's own failure says what happened.
  }
}

}  // namespace ringlab

#include "engine/rank/step_votes.h"

#include <algorithm>
#include <span>

#include <fmt/core.h>

#include "engine/core/error.h"
#include "engine/core/limits.h"
#include "engine/ddp/collective_check.h"
#include "engine/dist/ring_allreduce.h"
#include "engine/net/store.h"
#include "engine/rank/worker.h"

namespace ringlab {

StepVotes::StepVotes(ProcessGroup& group, Cadence cadence, bool check_collectives, StepVoteHooks hooks,
                     std::chrono::milliseconds spacing)
    : group_(group), cadence_(cadence), spacing_(spacing), check_(check_collectives), hooks_(std::move(hooks)) {}

int64_t StepVotes::next_gap(int64_t step) {
  if (cadence_ == Cadence::EveryStep) return 1;
  const auto now = std::chrono::steady_clock::now();
  int64_t gap = 1;
  if (last_step_ >= 0 && step > last_step_) {
    const double per_step = std::chrono::duration<double>(now - last_vote_time_).count() / double(step - last_step_);
    const double wanted = std::chrono::duration<double>(spacing_).count() / std::max(per_step, 1e-9);
    gap = static_cast<int64_t>(std::clamp(wanted, 1.0, double(kMaxGap)));
  }
  last_step_ = step;
  last_vote_time_ = now;
  return gap;
}

// One ballot: {stop, wait, gap to the next vote, gate closed}, summed over the ranks. Rank 0
// alone says whether a stop was asked for and whether the gate holds the ranks (the keys as its
// watcher last saw them) and how far the next vote is; every rank says whether its own events
// are piling up, so a backlog on any rank holds them all at this boundary, and none is left
// alone inside a collective with a peer that waits for the controller.
Vote StepVotes::vote_once(int64_t step) {
  float ballot[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  if (hooks_.controller_behind && hooks_.controller_behind()) ballot[1] = 1.0f;
  if (group_.rank() == 0) {
    if (hooks_.stop_requested && hooks_.stop_requested()) ballot[0] = 1.0f;
    ballot[2] = static_cast<float>(next_gap(step));
    if (hooks_.gate_closed && hooks_.gate_closed()) ballot[3] = 1.0f;
    // Held at the gate, the ranks vote at every step: a stop or a live change asked while they
    // are held lands at the end of the step they are in. With the gap picked while they ran
    // freely (about 100 steps of this seed), the ranks let go of the gate by the stop trained
    // that many steps more while the window said "paused". Held steps take a person's time; a
    // vote in each costs nothing one can see.
    if (ballot[3] > 0) ballot[2] = 1.0f;
  }
  if (group_.size() > 1) {
    if (group_.backend() == "nccl") {
      group_.broadcast(std::span<float>(ballot), 0);  // NCCL reduces device memory: rank 0's view
    } else {
      sum_ballots(std::span<float>(ballot), step);
    }
  }
  next_vote_ = step + std::max<int64_t>(1, static_cast<int64_t>(ballot[2]));
  gate_closed_ = ballot[3] > 0;
  return ballot[0] > 0 ? Vote::Stop : ballot[1] > 0 ? Vote::WaitForController : Vote::Go;
}

// The ring over the group's point-to-point, with the check's fingerprint on its first message:
// on gloo a small exchange on the calling thread, where the backend's own all-reduce would go
// through gloo's I/O thread (milliseconds at 4 ranks on 2 cores). Small whole numbers: the sum
// is exact in any order.
void StepVotes::sum_ballots(std::span<float> ballot, int64_t step) {
  RingAllreduceOptions ring;
  const ddp::CollectiveFingerprint mine = ddp::stop_vote_fingerprint(step);
  const auto header = ddp::fingerprint_as_floats(mine);
  if (check_) {
    ring.header = header;
    ring.check_header = [this, &mine](std::span<const float> left) { ddp::compare_with_left(group_, mine, left); };
  }
  ring_allreduce(group_, ballot, ring);
}

bool StepVotes::stop_here(int64_t step) {
  if (next_vote_ >= 0 && step < next_vote_) return false;
  const auto waiting_since = std::chrono::steady_clock::now();
  Vote vote = vote_once(step);
  // Wait for the controller here, together: each rank gives it a while, then they vote again,
  // so no collective between them waits longer than a slice of the group's timeout.
  while (vote == Vote::WaitForController) {
    if (std::chrono::steady_clock::now() - waiting_since > hooks_.controller_patience)
      throw Error(fmt::format("rank {}: the controller has not read this run's events for {} s: it may be "
                              "suspended (Ctrl-Z); the ranks stopped waiting for it at step {}",
                              group_.rank(), std::chrono::duration_cast<std::chrono::seconds>(hooks_.controller_patience).count(),
                              step));
    if (hooks_.wait_for_controller) hooks_.wait_for_controller();
    vote = vote_once(step);
  }
  return vote == Vote::Stop;
}

// ---------------------------------------------------------------------------------------------

namespace {
constexpr std::chrono::milliseconds kWatchInterval(20);
}

ControllerWatch::ControllerWatch(const std::string& host, uint16_t port, const std::string& token,
                                 std::chrono::milliseconds timeout, std::chrono::milliseconds patience,
                                 bool watch_gate)
    : store_(std::make_unique<StoreClient>(host, port, token, timeout, patience)), watch_gate_(watch_gate) {
  if (watch_gate_) read_gate();
  thread_ = start_thread("watching the controller's stop and gate keys", [this] { loop(); });
}

ControllerWatch::~ControllerWatch() {
  {
    std::lock_guard lock(mutex_);
    quit_ = true;
  }
  quit_cv_.notify_all();
  thread_.join();
}

bool ControllerWatch::requested() const { return value_.load() != 0; }
bool ControllerWatch::for_change() const { return value_.load() == store_keys::kStopForChange; }
bool ControllerWatch::gate_closed() const { return gate_closed_.load(); }

bool GateModeReader::closed(StoreClient& store) {
  if (!key_seen_) key_seen_ = store.check({store_keys::kGateMode});
  return key_seen_ && store.get(store_keys::kGateMode) == std::vector<uint8_t>{1};
}

void ControllerWatch::read_gate() { gate_closed_ = gate_reader_.closed(*store_); }

void ControllerWatch::loop() {
  try {
    std::unique_lock lock(mutex_);
    while (!quit_) {
      lock.unlock();
      if (store_->check({store_keys::kStop})) {
        const std::vector<uint8_t> value = store_->get(store_keys::kStop);
        value_ = value.empty() ? store_keys::kStopToEnd : value[0];
        return;
      }
      if (watch_gate_) read_gate();
      lock.lock();
      quit_cv_.wait_for(lock, kWatchInterval, [this] { return quit_; });
    }
  } catch (...) {
    // The controller is gone (its end of the connection closed): nobody is left to ask for a
    // stop, and the run's own failure says what happened.
  }
}

}  // namespace ringlab

#pragma once
// How the ranks agree, at a step boundary, to stop (or to wait for the controller). The
// controller cannot stop a run by signalling each worker: every one would stop wherever it
// happened to be, and the ones still training would wait for the others in their next
// all-reduce until the timeout. So the decision is a collective of its own: rank 0 decides and
// broadcasts, after the same fingerprint check as every collective (a rank that skipped or
// added an all-reduce meets a mismatch here instead of pairing with the vote), and every rank
// acts on it at the same step boundary.
//
// Rank 0 never waits on the controller inside a vote, where every other rank waits for it:
// the stop key is read by a thread of its own (ControllerWatch), and whether the controller keeps up
// with the events is a look at rank 0's own queue. A controller that stops reading (suspended
// with Ctrl-Z or SIGSTOP) is then waited for by every rank together, at a step boundary, for
// as long as the controller's patience allows, instead of by one rank inside a collective
// while its peers give up on it after the run's timeout.
//
// The workers space their votes to about one per 50 ms of training, in the app's runs as in
// `ringlab run`'s: each vote also carries the number of steps until the next one, which rank 0
// picks from how long the steps since the last took, so a seed-sized step does not pay for a
// vote, and a stop, a live change or the gate closing still lands within that much training,
// well under what a person can tell from at once. A vote costs about as much as a step's
// all-reduce (a ring of small messages): at a vote every step the app's 4-rank gloo run took
// three times its step time, and at one every 5 ms of training its votes still took a tenth to
// a quarter of its training time (docs/speed.md). EveryStep is left for tests that want the
// boundary exactly. On host memory a vote is ringlab's ring over the group's point-to-point,
// the check riding on its first message, as every all-reduce's does.
//
// In the app's runs the votes also carry the step-through gate's mode, as rank 0's watcher last
// read it, so every rank knows whether to stop at the gate without asking the controller. While
// the gate holds them the ranks vote at every step, so that a stop or a live change asked while
// they are paused lands at the end of the step they are held in. A rank
// that asked the store itself before each ring step put a round trip to another process, at
// whatever priority the app's threads had, inside the ring, where every other rank waited for it.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <span>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "engine/dist/process_group.h"

namespace ringlab {

enum class Vote : uint8_t { Go = 0, Stop = 1, WaitForController = 2 };

struct StepVoteHooks {
  std::function<bool()> stop_requested;       // rank 0: the controller asked the run to stop
  std::function<bool()> gate_closed;          // rank 0: the step-through gate holds the ranks
  std::function<bool()> controller_behind;    // every rank: its own events are piling up, unread
  // Every rank, while some rank is behind: give the controller a while (well under the group's
  // timeout) to take this rank's events, then return, finished or not: the ranks vote again.
  std::function<void()> wait_for_controller;
  // How long the ranks wait, in all, for a controller that does not read before giving up.
  std::chrono::milliseconds controller_patience{600'000};
};

class StepVotes {
 public:
  enum class Cadence { EveryStep, Spaced };
  // Votes of a spaced cadence come at least every kMaxGap steps, whatever the steps cost: the
  // events of that many steps always fit in a rank's queue, so the ranks see a controller that
  // stopped reading at a vote before any of them blocks on a full queue inside a collective.
  static constexpr int64_t kMaxGap = 256;
  static constexpr std::chrono::milliseconds kSpacing{50};

  StepVotes(ProcessGroup& group, Cadence cadence, bool check_collectives, StepVoteHooks hooks,
            std::chrono::milliseconds spacing = kSpacing);
  // Called at every step boundary on every rank: true when the ranks agreed to stop here.
  bool stop_here(int64_t step);
  // Whether the step-through gate was closed at the last vote, the same on every rank (false
  // before the first vote and without a gate_closed hook on rank 0).
  bool gate_closed() const { return gate_closed_; }
  bool voted() const { return next_vote_ >= 0; }  // a first vote has been taken
  bool due(int64_t step) const { return next_vote_ < 0 || step >= next_vote_; }  // stop_here(step) votes

 private:
  int64_t next_gap(int64_t step);    // rank 0: steps until the vote after this one
  Vote vote_once(int64_t step);      // one ballot of every rank, summed
  void sum_ballots(std::span<float> ballot, int64_t step);

  ProcessGroup& group_;
  Cadence cadence_;
  std::chrono::milliseconds spacing_;
  bool check_;
  StepVoteHooks hooks_;
  int64_t next_vote_ = -1;           // -1: at the first boundary
  bool gate_closed_ = false;
  int64_t last_step_ = -1;
  std::chrono::steady_clock::time_point last_vote_time_;
};

class StoreClient;

// Reads the step-through gate's mode (store_keys::kGateMode): true while it holds the ranks. The
// controller sets the mode before it starts the workers and never removes it, so once the key is
// there one request a read is enough (get waits for a key that is not).
class GateModeReader {
 public:
  bool closed(StoreClient& store);

 private:
  bool key_seen_ = false;
};

// Watches the controller's keys in the store on a thread of its own, with a connection of its
// own, so that a controller that does not answer holds up this thread and nothing else: the stop
// key (store_keys::kStop) and, for a run driven by the app, the step-through gate's mode
// (store_keys::kGateMode), every 20 ms.
class ControllerWatch {
 public:
  // Connects like StoreClient (Error when the store cannot be reached). With `watch_gate`, reads
  // the gate's mode once before returning: a run started held at the gate is held from its
  // first all-reduce.
  ControllerWatch(const std::string& host, uint16_t port, const std::string& token, std::chrono::milliseconds timeout,
                  std::chrono::milliseconds patience, bool watch_gate);
  ~ControllerWatch();
  ControllerWatch(const ControllerWatch&) = delete;
  ControllerWatch& operator=(const ControllerWatch&) = delete;

  bool requested() const;    // the controller asked the run to stop
  bool for_change() const;   // ... to go on with another set of workers (rank 0 checkpoints)
  bool gate_closed() const;  // the step-through gate's mode as last read (false without watch_gate)

 private:
  void loop();
  void read_gate();

  std::unique_ptr<StoreClient> store_;
  const bool watch_gate_;
  GateModeReader gate_reader_;
  std::atomic<uint8_t> value_{0};  // the stop key's value once set: see store_keys::kStop
  std::atomic<bool> gate_closed_{false};
  std::mutex mutex_;
  std::condition_variable quit_cv_;
  bool quit_ = false;
  std::thread thread_;
};

}  // namespace ringlab

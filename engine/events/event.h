#pragma once
// What a worker reports about itself. Events are data, never drawing: the controller stores
// them in an EventStore, the views read them, the exporters write them.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ringlab {

enum class EventKind : uint8_t {
  RunBegin = 0,        // text: JSON of the job config; value: world size
  StepBegin = 1,       // step, epoch
  StepEnd = 2,         // step, epoch, value = local loss of this step
  Forward = 3,         // t_begin..t_end of the forward pass
  Backward = 4,        // t_begin..t_end of the backward pass
  BucketReady = 5,     // bucket index, bytes; t_begin = moment its last gradient was ready
  CollectiveBegin = 6, // collective_id, bucket, bytes, text = "ring" | "native" | "broadcast" | "demo"
  CollectiveEnd = 7,   // collective_id, t_begin..t_end
  ChunkTransfer = 8,   // one chunk (or segment) sent from src to dst: phase, ring_step, chunk, bytes,
                       // t_begin (send posted) .. t_end (receive completed); values = the receiver's
                       // chunk after this step, for tensors of at most 64 elements
  OptimizerStep = 9,   // t_begin..t_end
  SamplerShard = 10,   // epoch; indices = this rank's index list for the epoch (in pieces when long)
  EpochEnd = 11,       // epoch, value = MSE over the whole dataset (rank 0)
  Error = 12,          // text = message; code = its ErrorCode
  Log = 13,            // text
  GateWait = 14,       // a gated ring waited for the controller: t_begin..t_end, ring_step
  RunEnd = 15,         // value = us per step, step = steps trained, text = "done" | "stopped"
  FlightRecord = 16,   // text = JSON of this rank's flight recorder (sent when a rank fails)
  Fault = 17,          // a fault injected on purpose into this rank, at `step`: code = its FaultKind; src = who
                       // injected it (the rank itself, or -1: the controller, for the app's kill
                       // button); text says it in words
  FinalParameters = 18,  // values = rank 0's parameters at the end (or where it stopped), in pieces
  RunStopped = 19,     // the controller's (rank -1): the run is being ended because someone asked
                       // (code: its StopCause; text: the same in words); what the ranks report
                       // after it is teardown
  TornDown = 20,       // this rank ends on a SIGTERM: its controller's (the group is being taken
                       // down: another rank failed, or a stop; not a failure of its own), or,
                       // with code kTornDownFromOutside, one from outside ringlab (kill, scancel)
  Restart = 21,        // the controller's (rank -1): the group starts again from the checkpoint of
                       // `epoch`, `step`; value = the restart's number (1, 2, ...); text in words.
                       // What was recorded after that point is done again: readers drop it
  WorldChange = 22,    // the controller's (rank -1): the run goes on with `value` ranks on backend
                       // `text`, from `step`
  CollectiveMismatch = 23,  // the collective check stopped this rank: indices = its own fingerprint
                            // then its left neighbour's (kFingerprintFields each); src = that neighbour
  StepVote = 24,       // t_begin..t_end of the ranks' vote at a step boundary (stop, hold at the
                       // gate, wait for the controller): ringlab's own collective, not DDP's; step
  Straggle = 25,       // t_begin..t_end of the sleep a delay fault (the Straggler lab) put this rank
                       // into as `step` began; value = the delay in ms
};

// TornDown's code when the SIGTERM came from outside ringlab: that rank is the cause, not the stop.
inline constexpr int32_t kTornDownFromOutside = 1;

inline constexpr EventKind kLastEventKind = EventKind::Straggle;

// The faults a failure lab injects (parsed from "kill:2@5" and the like in job/fault_plan.h).
enum class FaultKind : uint8_t { Kill = 0, Delay = 1, Drop = 2, Skip = 3, Extra = 4, Resize = 5 };
inline constexpr int kLastFaultKind = 5;
const char* to_string(FaultKind kind);  // "kill", "delay", ...
std::optional<FaultKind> fault_kind_named(std::string_view name);

// What kind of error a rank raised: from the type of the exception, never from its message.
enum class ErrorCode : uint8_t {
  Other = 0,
  Timeout = 1,             // a wait passed the run's timeout (TimeoutError)
  PeerClosed = 2,          // a peer's connection closed under a send or receive (PeerClosedError)
  CollectiveMismatch = 3,  // the collective check found another collective on the neighbour
  BadInput = 4,            // a value the rank was given is refused (InputError)
};
const char* to_string(ErrorCode code);

// Who or what ended a run before its end. None: nobody did; it ran to its end, or a rank failed.
enum class StopCause : uint8_t {
  None,
  StopButton,     // the app's Stop (or the app closing, or a new run replacing this one)
  Interrupt,      // SIGINT (Ctrl-C) to the controller
  Terminate,      // SIGTERM to the controller
  NoProgress,     // the controller's watchdog: no event from any rank for the timeout + 15 s
  ResourceLimit,  // the controller ran out of descriptors or threads (RLIMIT_NOFILE, RLIMIT_NPROC)
  OtherNode,      // another node of a multi-node run ended it (its rank failed, or it was stopped)
  Hangup,         // SIGHUP to the controller: the terminal it ran in closed
};

enum class RingPhase : int8_t { None = -1, ReduceScatter = 0, AllGather = 1 };

struct Event {
  EventKind kind = EventKind::Log;
  int32_t rank = 0;
  int64_t t_begin_ns = 0;  // steady clock, shared by all processes on the machine
  int64_t t_end_ns = 0;
  int64_t step = -1;       // global training step, -1 when none
  int32_t epoch = -1;
  int64_t collective_id = -1;  // per-rank sequence number of the collective
  int32_t bucket = -1;
  int8_t phase = -1;       // RingPhase
  int32_t ring_step = -1;
  int32_t chunk = -1;
  int32_t segment = -1;
  int32_t src = -1;
  int32_t dst = -1;
  int64_t bytes = 0;
  double value = 0.0;
  int32_t code = -1;       // by kind: FaultKind, ErrorCode, StopCause, kStepDetailsLeftOut (-1: none)
  std::vector<float> values;
  std::vector<int64_t> indices;
  std::string text;
};

const char* to_string(EventKind kind);
// An error's or a log line's text as the run's output shows it: "rank R: text", unless the text
// already begins with its rank (a worker's own errors carry it).
std::string said_by_rank(const Event& e);

// Payloads longer than one frame may carry (a sampler shard of millions of indices, a big model's
// parameters) travel as several events of the same kind, each with a piece of the array, in
// order: `bytes` holds the element count of the whole payload and `segment` where this piece
// starts. An event that travels whole has bytes 0 and segment -1. See emit_in_pieces.
inline constexpr size_t kPieceElements = size_t{1} << 20;
inline int64_t piece_offset(const Event& e) { return e.segment < 0 ? 0 : e.segment; }
inline int64_t piece_size(const Event& e) {
  return static_cast<int64_t>(e.indices.empty() ? e.values.size() : e.indices.size());
}
inline int64_t payload_size(const Event& e) { return e.bytes > 0 ? e.bytes : piece_size(e); }
inline bool first_piece(const Event& e) { return piece_offset(e) == 0; }
inline bool last_piece(const Event& e) { return piece_offset(e) + piece_size(e) >= payload_size(e); }

// The controller's marker for a restart of the whole group (see EventKind::Restart).
inline bool is_restart_marker(const Event& e) { return e.kind == EventKind::Restart; }

// The StepEnd of a rank out of data under Join: it shadowed the others' all-reduce with zeros and
// trained no batch, so the step has no loss of its own (its value is not one).
inline bool is_joined_step(const Event& e) { return e.kind == EventKind::StepEnd && e.text == "joined"; }

// The app's event feed, keeping up with a fast run, leaves out the details of some steps (their
// spans and collectives; see view_model::EventFeed). It keeps every StepEnd, and marks that of a
// step left out with this code, so that the views can say the step ran unseen rather than show
// an idle gap. Set in the app only; a worker never sends it.
inline constexpr int32_t kStepDetailsLeftOut = 1;
inline bool step_details_left_out(const Event& e) { return e.kind == EventKind::StepEnd && e.code == kStepDetailsLeftOut; }

// Where events go. The worker's sink sends them to the controller; tests collect them in memory.
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void emit(Event event) = 0;
  // The events of one read of a connection, in order (`events` is left empty). A sink that
  // takes a lock per event takes it once here: during a fast run the controller's readers hand
  // on 100,000 or more events a second.
  virtual void emit_all(std::vector<Event>& events) {
    for (Event& e : events) emit(std::move(e));
    events.clear();
  }
  // How much detail the sink wants: chunk events cost a little, so they can be switched off.
  virtual bool wants_chunks() const { return true; }
  // Delivers what is queued, where the sink queues (a rank about to die on purpose says so first).
  virtual void flush_events() {}
};

// Discards everything; the default when nobody listens.
class NullEventSink : public EventSink {
 public:
  void emit(Event) override {}
  bool wants_chunks() const override { return false; }
};

}  // namespace ringlab

#pragma once
// Which rank broke a run, and where every other rank was waiting, from the events the workers
// sent: the faults they injected, the errors they raised, the flight recorders they sent when
// the run failed, and their last progress. The views use it to put the stuck rank in a warning
// colour (ring) and to mark its lane from its last event on (timeline); the failure lab prints
// it as a table. Pure data: the app translates and draws it.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/events/collective_fingerprint.h"
#include "engine/events/event.h"
#include "engine/events/killed_rank_position.h"
#include "engine/events/rank_exit.h"

namespace ringlab::view_model {

// Why a rank is highlighted. Waiting ranks are the victims: in a collective that could not end.
enum class RankCause : uint8_t {
  None,       // finished, or was stopped by the controller with the others
  Waiting,    // inside a collective that could not complete
  Killed,     // its process died by a signal (an injected kill, the app's kill button, SIGPIPE)
  Exited,     // its process ended with a failing exit code and said no error (a script's os._exit)
  Dropped,    // closed its connections to the others on purpose
  Mismatch,   // called a collective the others did not (skip, extra) or with another size
  OutOfData,  // uneven inputs without Join: it left the training loop while the others went on
  EndedEarly, // it ended its run normally while others still waited for it in a later collective
  Missing,    // alive, but absent from the collective the others wait in
  Raised,     // absent from it because it raised an error of its own (a script's exception)
  Failed,     // raised the run's first error and none of the above explains it
};
const char* to_string(RankCause cause);
// Killed or Exited: the process ended without a word, and its last events may have died with it.
inline bool ended_silently(RankCause cause) { return cause == RankCause::Killed || cause == RankCause::Exited; }

struct RankDiagnosis {
  int rank = 0;
  RankCause cause = RankCause::None;
  bool culprit = false;           // the rank the failure is about: highlighted in warning colour
  int64_t last_progress_ns = -1;  // steady clock: its last forward, backward, chunk, or collective
  int64_t step = -1;              // the training step it was in
  int64_t collective = -1;        // the collective it was in or last finished (flight recorder numbering)
  std::string op;                 // that collective's operation: "allreduce", "barrier", "join-flag", ...
  bool collective_done = false;   // it finished that collective
  int ring_step = -1;             // 0 .. 2(N-1)-1: the ring step it was in, -1 before the first
  int64_t chunk_sent_in = -1;     // the latest collective in which another rank received its chunk
  int64_t numel = -1;             // the collective's size in elements, when known
  // Killed before it sent its last events: `collective`, `collective_done` and `step` are where
  // the other ranks' positions place it, not what it reported.
  bool position_from_peers = false;
  std::string fault;              // what it injected, in words: "kill: SIGKILL" ("" when nothing)
  std::optional<FaultKind> fault_kind;  // the same, typed
  bool fault_from_controller = false;   // injected by the controller (the app's kill button)
  int64_t fault_step = -1;
  std::string exit;               // how its process ended: "killed by SIGKILL" ("" when unknown or fine)
  // Its process was stopped (SIGSTOP, Ctrl-Z, a debugger) when the run was ended: it could take no
  // part, and its last events were held in it (its position is its last report, behind the others).
  bool process_stopped = false;
  std::string error;              // its first error, when it raised one
  std::optional<ErrorCode> error_code;  // that error's kind
};

// The two fingerprints of a mismatched collective (from a CollectiveMismatch event), oriented so
// that `actual` is the culprit's.
struct FingerprintMismatch {
  int reporter = -1;      // the rank whose check failed
  int neighbour = -1;     // its left neighbour, whose fingerprint it compared with
  CollectiveFingerprint reporter_fingerprint, neighbour_fingerprint;
  int culprit = -1;                // which of the two broke the order (-1: unknown)
  CollectiveFingerprint expected;  // what the healthy ranks called
  CollectiveFingerprint actual;    // what the culprit called
};

// The mismatch a CollectiveMismatch event reports; nullopt for any other event.
std::optional<FingerprintMismatch> mismatch_of(const Event& e);

struct FailureDiagnosis {
  bool failed = false;               // this attempt failed (or is failing right now)
  int world_size = 0;
  std::vector<RankDiagnosis> ranks;  // one per rank
  std::vector<int> culprits;         // ranks to highlight, lowest first
  // The flight recorders lined up (when the ranks sent them): the collective some rank is stuck in.
  int64_t stuck_collective = -1;
  std::string stuck_op;
  std::vector<int> waiting, missing, silent;
  // No flight recorder was sent (a PyTorch script): the stuck collective, waiting and missing
  // come from the ranks' last reported collectives instead (engine/events/stuck_collective.h).
  bool stuck_from_last_reports = false;
  std::optional<FingerprintMismatch> mismatch;
  std::string first_error;           // "rank 2: ..." the earliest error that was not a teardown
  // When this failure was restarted: which restart, and the epoch and step it resumed from (the
  // epoch checkpoint's; 0 and 0 when no epoch had ended). restart_number 0: not restarted.
  int restart_number = 0;
  int restart_epoch = 0;
  int64_t restart_step = 0;
  int64_t failed_at_ns = -1;         // steady clock: the latest error or fault of this attempt
  int64_t stopped_at_ns = -1;        // steady clock: when the run was stopped on request (RunStopped)

  const RankDiagnosis* rank(int r) const;
  bool is_culprit(int r) const;
  bool explained() const;  // some rank has a cause
  std::vector<PeerPosition> positions() const;  // each rank's collective, by rank
};

// Fed every event of a run, in arrival order. Each set of workers (an attempt) is diagnosed on
// its own: a restart keeps the failed attempt's diagnosis as `last_restarted()` and starts over.
class FailureTracker {
 public:
  FailureTracker();
  ~FailureTracker();
  FailureTracker(FailureTracker&&) noexcept;
  FailureTracker& operator=(FailureTracker&&) noexcept;

  void consume(const Event& event);
  void clear();

  // Exits of the processes, from the controller's RunResult: names signals the events cannot.
  void note_exits(const std::vector<RankExit>& exits);

  FailureDiagnosis diagnose(int world_size) const;                       // the current attempt
  const std::optional<FailureDiagnosis>& last_restarted() const { return restarted_; }
  int restarts() const { return restarts_; }

 private:
  struct RankTrack {
    int64_t last_progress_ns = -1;
    int64_t step = -1;
    int64_t collective = -1;
    std::string collective_text;
    int64_t collective_numel = -1;
    bool collective_done = false;
    int ring_step = -1;
    int64_t chunk_sent_in = -1;  // the latest collective in which another rank received its chunk
    std::string fault;
    std::optional<FaultKind> fault_kind;
    bool fault_from_controller = false;
    int64_t fault_step = -1;
    std::string error;
    std::optional<ErrorCode> error_code;
    bool stopped = false;  // torn down by the controller with the others (SIGTERM)
    bool ended_normally = false;  // it sent RunEnd "done", or its process exited 0
    std::string exit;
    bool exit_is_signal = false;
    bool exited_failing = false;  // a failing exit code (its own error may still be on its way)
    int64_t exit_seen_unix_ns = 0;  // when its launcher saw it end, 0 when unknown
    bool process_stopped = false;   // its process was stopped (SIGSTOP, Ctrl-Z) when the launcher ended it
  };
  RankTrack& track(int rank);
  bool after_stop(const Event& e) const;  // reported after a stop that was asked for
  void take_error(RankTrack& t, const Event& e);  // the rank's own error, or its end from outside
  bool exited_without_a_word(int rank) const;  // a failing exit, no error of its own, not an echo
  void note_uneven(const std::string& job_json);
  void start_attempt();

  std::vector<RankTrack> ranks_;
  struct FlightRecords;                  // the JSON each rank sent (failure_diagnosis.cpp)
  std::unique_ptr<FlightRecords> flight_;  // this attempt's flight recorders
  std::vector<std::string> errors_;     // "rank R: text", in arrival order, teardowns left out
  std::vector<FingerprintMismatch> mismatches_;  // every collective check that failed
  std::string controller_error_;        // the controller's own error (no progress from any rank)
  int64_t failed_at_ns_ = -1;
  int64_t stopped_at_ns_ = -1;          // the controller's RunStopped: later errors are its teardown
  int world_hint_ = 0;                  // from RunBegin
  std::vector<int> out_of_data_;        // ranks the job gives fewer batches, without Join (from RunBegin)
  std::optional<FailureDiagnosis> restarted_;
  int restarts_ = 0;
};

}  // namespace ringlab::view_model

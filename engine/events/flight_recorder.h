#pragma once
// Each rank's flight recorder, like PyTorch's NCCL flight recorder: the last K collectives in a
// ring buffer (sequence number, operation, size, backend, state, timestamps, current ring step).
// When a run fails or hangs, every rank that can still talk sends its recorder to the
// controller, which lines them up: which rank is behind, at which collective and step, and which
// ranks never reached a collective that others are waiting in.
#include <cstdint>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace ringlab {

enum class CollectiveState : uint8_t { Scheduled, Started, Completed };

struct CollectiveRecord {
  int64_t seq = 0;
  std::string op;        // "allreduce", "broadcast", "join-flag", ...
  int64_t numel = 0;
  std::string backend;
  std::string algorithm;
  CollectiveState state = CollectiveState::Scheduled;
  int64_t t_scheduled_ns = 0, t_started_ns = 0, t_completed_ns = 0;
  int64_t step = -1;     // training step
  int ring_step = -1;    // 0 .. 2(N-1)-1 while a ring runs
};

class FlightRecorder {
 public:
  explicit FlightRecorder(size_t capacity = 2000) : capacity_(capacity) {}

  int64_t schedule(const std::string& op, int64_t numel, const std::string& backend, const std::string& algorithm,
                   int64_t step);
  void start(int64_t seq);
  void ring_step(int64_t seq, int ring_step);
  void complete(int64_t seq);
  std::vector<CollectiveRecord> records() const;  // oldest first
  nlohmann::json to_json(int rank) const;

  // The process is about to end (SIGTERM): a thread that schedules a collective from now on waits
  // there until it does, so the record taken next is where the training stopped and none of its
  // events is sent after that. Returns once a thread waits there, or after `settle` (a thread
  // blocked inside a collective never comes).
  void hold_new_collectives(std::chrono::milliseconds settle);

 private:
  CollectiveRecord* find(int64_t seq);

  mutable std::mutex mutex_;
  std::condition_variable held_cv_;
  bool holding_ = false;
  bool one_held_ = false;
  size_t capacity_;
  std::vector<CollectiveRecord> ring_;
  size_t next_ = 0;
  int64_t next_seq_ = 0;
};

const char* to_string(CollectiveState s);

// The controller's view: every rank's recorder (the JSON each rank sent in its FlightRecord
// event), lined up. Ranks that sent nothing (a killed process) are listed as silent. The text
// opens with kFlightReportTitle's line, then a table: its header and one row per rank, each
// indented by two spaces (the app lays the table out apart from the prose around it).
inline constexpr const char* kFlightReportTitle = "flight recorder (last collective of each rank):";
std::string format_flight_report(const std::vector<nlohmann::json>& reported, int world_size);
nlohmann::json flight_report_json(const std::vector<nlohmann::json>& reported, int world_size);

}  // namespace ringlab

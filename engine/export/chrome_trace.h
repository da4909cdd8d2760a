#pragma once
// Writes a run's events as a Chrome trace (the JSON object form, {"traceEvents": [...]}), which
// Perfetto (ui.perfetto.dev) and chrome://tracing open.
//
// Layout: one process per rank, named "rank N" (pid N + 1: pid 0 means "no process" to some
// viewers; events from outside any rank go to a process named "controller"), each with two
// threads: "compute" (steps, forward, backward, optimizer step, bucket-ready marks) and
// "communication" (collectives, and inside them the chunk transfers and gate waits).
// Each chunk also gets a flow arrow from the sending rank, at the moment the send was posted, to
// the receiving rank, at the moment the receive completed. Times are microseconds since the
// earliest event in the run.
//
// ChromeTraceWriter builds the trace as events arrive, so a long run is never held in memory:
// a span is written once it has closed (a step at its StepEnd, a collective at its
// CollectiveEnd, a rank's chunk transfers once their collective has ended, since they are drawn
// clipped to it), into a temporary file of raw records; write() turns them into the JSON with
// times from the earliest event, which is only known at the end.
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "engine/events/event.h"

namespace ringlab {

inline constexpr int kTraceComputeTid = 1;
inline constexpr int kTraceCommunicationTid = 2;
inline constexpr int kTraceControllerPid = 1'000'000;
inline int trace_pid(int rank) { return rank >= 0 ? rank + 1 : kTraceControllerPid; }

class ChromeTraceWriter : public EventSink {
 public:
  // `ranks_per_node` (a multi-node run's JobConfig::ranks_per_node) names each rank's process
  // with its node, "rank 2 (node 1)", so a trace viewer shows which ranks shared a machine.
  explicit ChromeTraceWriter(std::vector<int> ranks_per_node = {});
  ~ChromeTraceWriter() override;
  void emit(Event event) override;  // one producer at a time (the controller serialises them)
  // Writes the whole trace; collectives that never ended are marked "(unfinished)". Throws Error
  // naming the path when it cannot be written, or when the records could not be kept.
  // `what` names the output in that error (the flag that asked for it, where there is one).
  void write(const std::string& path, const char* what = "the Chrome trace");
  void write(std::ostream& out);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// The whole trace from a list of events (each rank's events in the order they happened).
// Throws Error naming the path when it cannot be written.
void write_chrome_trace(const std::vector<Event>& events, const std::string& path);
void write_chrome_trace(const std::vector<Event>& events, std::ostream& out);

}  // namespace ringlab

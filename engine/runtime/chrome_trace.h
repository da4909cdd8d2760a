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
#include <ostream>
#include <string>
#include <vector>

#include "engine/runtime/event.h"

namespace ringlab {

inline constexpr int kTraceComputeTid = 1;
inline constexpr int kTraceCommunicationTid = 2;
inline constexpr int kTraceControllerPid = 1'000'000;
inline int trace_pid(int rank) { return rank >= 0 ? rank + 1 : kTraceControllerPid; }

// Throws Error naming the path when it cannot be written.
void write_chrome_trace(const std::vector<Event>& events, const std::string& path);
void write_chrome_trace(const std::vector<Event>& events, std::ostream& out);

}  // namespace ringlab

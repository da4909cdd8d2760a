#pragma once
// Reading a run back from the Chrome trace that `--trace` writes (the JSON object form with
// "traceEvents", or a bare array of events), so a recorded run can be replayed later.
//
// What is read: complete events (ph "X": ts and dur in microseconds) and instant events
// (ph "i"/"I": ts), in the layout ringlab's Chrome trace writer uses (engine/export/chrome_trace.h):
// pid = rank + 1, and the event told by its "cat" and "name":
//   cat "step" (a whole step), cat "compute" with name "forward" / "backward" / "optimizer step",
//   cat "ddp" "bucket ready", cat "collective" (a whole collective; args collective_id, bucket,
//   bytes), cat "ring" "reduce-scatter" / "all-gather" / "chunk" (one chunk on the receiving rank;
//   args src, dst, bytes, ring_step, chunk, segment, collective_id, and send_posted_us: the
//   event's own t_begin, which the drawn slice may not show).
// An event may instead name its EventKind in args.kind ("forward", "chunk", "collective_begin",
// ...) with args.rank; args.rank always wins over the pid. Metadata, flows, counters, gate waits
// and the controller's process are skipped.
#include <string>
#include <vector>

#include "engine/events/event.h"

namespace ringlab::sim {

// Both throw InputError naming the origin (file name), the event's index and what is wrong.
std::vector<Event> parse_chrome_trace(const std::string& text, const std::string& origin);
std::vector<Event> load_chrome_trace(const std::string& path);

}  // namespace ringlab::sim

#pragma once
// Turns what the workers reported (events) and how their processes ended into a RunResult:
// the events are the single source of truth for the report, the app and the exporters.
#include <vector>

#include "engine/runtime/controller.h"
#include "engine/runtime/event_store.h"
#include "engine/runtime/launcher.h"

namespace ringlab {

RunResult build_run_result(const EventStore& events, size_t first_event, const JobConfig& job,
                           const std::vector<RankExit>& exits, bool stopped_by_user);

// "rank 2: collective 14 (bucket 0, ring), all-gather step 1 of 3" for each rank, from its
// last events: where every rank was when the run ended.
std::vector<std::string> describe_rank_positions(const std::vector<Event>& events, int world_size);

}  // namespace ringlab

#pragma once
// Writes one CSV row per (rank, step) that finished:
//   rank,epoch,step,loss,step_us,forward_us,backward_us,comm_us,optimizer_us
// step_us runs from StepBegin to StepEnd; the other columns add up that rank's spans inside the
// step (several forward/backward passes with gradient accumulation); comm_us is the sum of its
// collectives' spans. Rows are ordered by rank, then step.
#include <ostream>
#include <string>
#include <vector>

#include "engine/runtime/event.h"

namespace ringlab {

inline constexpr const char* kMetricsCsvHeader =
    "rank,epoch,step,loss,step_us,forward_us,backward_us,comm_us,optimizer_us";

// Throws Error naming the path when it cannot be written.
void write_metrics_csv(const std::vector<Event>& events, const std::string& path);
void write_metrics_csv(const std::vector<Event>& events, std::ostream& out);

}  // namespace ringlab

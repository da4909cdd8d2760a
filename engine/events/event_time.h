#pragma once
// When an event happened, read the same way by every exporter. A span (Forward, a collective, a
// chunk) has t_begin_ns..t_end_ns; an instant (StepBegin, BucketReady, Log) may carry its time in
// either field, so a missing (zero) field falls back to the other one.
#include <algorithm>
#include <cstdint>

#include "engine/events/event.h"

namespace ringlab {

inline int64_t event_begin_ns(const Event& e) { return e.t_begin_ns != 0 ? e.t_begin_ns : e.t_end_ns; }

inline int64_t event_end_ns(const Event& e) {
  return std::max(event_begin_ns(e), e.t_end_ns != 0 ? e.t_end_ns : e.t_begin_ns);
}

}  // namespace ringlab

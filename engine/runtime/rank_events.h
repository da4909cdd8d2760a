#pragma once
// Small helpers a rank's training loop (CPU or GPU) uses to report what it does.
#include <cstdint>
#include <utility>

#include "engine/core/clock.h"
#include "engine/runtime/event.h"

namespace ringlab {

// An instant event stamped now.
inline Event make_event(EventKind kind, int rank, int64_t step, int epoch) {
  Event e;
  e.kind = kind;
  e.rank = rank;
  e.step = step;
  e.epoch = epoch;
  e.t_begin_ns = e.t_end_ns = now_ns();
  return e;
}

// A span (forward, backward, optimizer step) from t0 to now.
inline void emit_span(EventSink& sink, EventKind kind, int rank, int64_t step, int epoch, int64_t t0) {
  Event e = make_event(kind, rank, step, epoch);
  e.t_begin_ns = t0;
  sink.emit(std::move(e));
}

}  // namespace ringlab

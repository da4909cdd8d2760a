#pragma once
// Small helpers a rank's training loop (CPU or GPU) uses to report what it does.
#include <algorithm>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "engine/core/clock.h"
#include "engine/events/event.h"

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

// Emits `head` with `items` as its indices or values (`field`): whole, or in pieces of
// kPieceElements when there are more (see event.h), each piece a copy of `head` with its slice.
template <class T>
void emit_in_pieces(EventSink& sink, const Event& head, std::span<const T> items, std::vector<T> Event::*field) {
  const bool whole = items.size() <= kPieceElements;
  for (size_t at = 0; at == 0 || at < items.size(); at += kPieceElements) {
    Event piece = head;
    if (!whole) {
      piece.bytes = static_cast<int64_t>(items.size());
      piece.segment = static_cast<int32_t>(at);
    }
    const auto slice = items.subspan(at, std::min(kPieceElements, items.size() - at));
    (piece.*field).assign(slice.begin(), slice.end());
    sink.emit(std::move(piece));
  }
}

// This rank's shard of an epoch.
inline void emit_shard(EventSink& sink, int rank, int64_t step, int epoch, std::span<const int64_t> shard) {
  emit_in_pieces(sink, make_event(EventKind::SamplerShard, rank, step, epoch), shard, &Event::indices);
}

// Rank 0's parameters where it ended or stopped, for the report.
inline void emit_final_parameters(EventSink& sink, int rank, int64_t step, std::span<const float> parameters) {
  emit_in_pieces(sink, make_event(EventKind::FinalParameters, rank, step, -1), parameters, &Event::values);
}

// A span (forward, backward, optimizer step) from t0 to now.
inline void emit_span(EventSink& sink, EventKind kind, int rank, int64_t step, int epoch, int64_t t0) {
  Event e = make_event(kind, rank, step, epoch);
  e.t_begin_ns = t0;
  sink.emit(std::move(e));
}

}  // namespace ringlab

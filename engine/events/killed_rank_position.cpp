#include "engine/events/killed_rank_position.h"

#include <algorithm>

namespace ringlab {

namespace {

// It sent a chunk in a collective no other rank has finished: it died inside it, at the step of a
// rank still waiting there (its own, if none is).
std::optional<KilledRankPosition> inside_where_it_sent(const PeerPosition& own, const std::vector<PeerPosition>& others,
                                                       int64_t sent_in) {
  if (own.collective >= sent_in) return std::nullopt;
  int64_t step = own.step;
  for (const PeerPosition& p : others)
    if (p.collective == sent_in && !p.done) step = std::max(step, p.step);
  return KilledRankPosition{sent_in, false, step};
}

}  // namespace

std::optional<KilledRankPosition> place_killed_rank(const PeerPosition& own, const std::vector<PeerPosition>& others,
                                                    int64_t sent_in) {
  const auto last_finished = [](const PeerPosition& p) { return p.done ? p.collective : p.collective - 1; };
  int64_t latest = -1;
  for (const PeerPosition& p : others)
    if (p.collective >= 0) latest = std::max(latest, last_finished(p));
  if (sent_in > latest) return inside_where_it_sent(own, others, sent_in);
  if (latest < 0 || own.collective > latest || (own.collective == latest && own.done)) return std::nullopt;
  const PeerPosition* inside = nullptr;  // a rank still waiting in it
  const PeerPosition* past = nullptr;    // the rank past it at the earliest step
  for (const PeerPosition& p : others) {
    if (p.collective < 0) continue;
    if (p.collective == latest && !p.done) inside = &p;
    else if (!past || p.step < past->step) past = &p;
  }
  // Its record says it is inside the latest collective, and a rank still is: nothing to add.
  if (own.collective == latest && inside) return std::nullopt;
  return KilledRankPosition{latest, inside == nullptr, inside ? inside->step : past->step};
}

}  // namespace ringlab

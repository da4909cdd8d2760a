#include "engine/events/killed_rank_position.h"

#include <algorithm>

namespace ringlab {

std::optional<KilledRankPosition> place_killed_rank(const PeerPosition& own, const std::vector<PeerPosition>& others) {
  const auto last_finished = [](const PeerPosition& p) { return p.done ? p.collective : p.collective - 1; };
  int64_t latest = -1;
  for (const PeerPosition& p : others)
    if (p.collective >= 0) latest = std::max(latest, last_finished(p));
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

#include "engine/events/stuck_collective.h"

namespace ringlab {

StuckCollective stuck_collective(const std::vector<PeerPosition>& ranks) {
  StuckCollective s;
  for (const PeerPosition& p : ranks)
    if (!p.done && p.collective > s.collective) s.collective = p.collective;
  if (s.collective < 0) return s;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i].collective == s.collective && !ranks[i].done) s.waiting.push_back(i);
    else if (ranks[i].collective < s.collective) s.missing.push_back(i);
  }
  return s;
}

}  // namespace ringlab

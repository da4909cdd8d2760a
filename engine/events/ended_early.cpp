#include "engine/events/ended_early.h"

namespace ringlab {

std::vector<size_t> left_waiting(int64_t own_collective, const std::vector<PeerPosition>& ranks) {
  std::vector<size_t> waiting;
  for (size_t i = 0; i < ranks.size(); ++i)
    if (ranks[i].collective > own_collective && !ranks[i].done) waiting.push_back(i);
  return waiting;
}

}  // namespace ringlab

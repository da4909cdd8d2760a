#pragma once
// Which collective a failed run is stuck in, and who never joined it, from the ranks' last
// reported positions. The flight recorders say it best (engine/events/flight_recorder.h), but a
// PyTorch script sends none; its ranks' last collectives line up the same way. The collective
// the run is stuck in is the latest any rank is inside; a rank whose last collective is an
// earlier one never joined it: it is busy elsewhere (a long step, a sleep, a deadlock of its
// own), or it has ended.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/events/killed_rank_position.h"

namespace ringlab {

struct StuckCollective {
  int64_t collective = -1;      // -1: no rank is inside a collective
  std::vector<size_t> waiting;  // indices into the positions: inside it
  std::vector<size_t> missing;  // last seen in an earlier collective, or in none
};

StuckCollective stuck_collective(const std::vector<PeerPosition>& ranks);

}  // namespace ringlab

#pragma once
// Where a rank killed by a signal was when it died. Its own events stop short: a worker sends
// them every few milliseconds, and the last ones die with the process, so its record can lag the
// others' by dozens of steps. The others place it. No rank finishes a ring all-reduce without
// every other rank's chunks, so it took part in the latest collective another rank finished; if
// some rank still waits in that one, it died inside it, before sending its last chunk; if every
// other rank is past it, it had finished it. A chunk another rank received from it says more: it
// was inside that collective, even when the others' ends do not show it yet (they wait in it). The
// failure lab's table and the controller's report both say this one answer.
#include <cstdint>
#include <optional>
#include <vector>

namespace ringlab {

struct PeerPosition {
  int64_t collective = -1;  // the collective it is in or last finished; -1: none yet
  bool done = false;        // it finished that collective
  int64_t step = -1;
};

struct KilledRankPosition {
  int64_t collective = -1;
  bool done = false;  // finished it; false: died inside it
  int64_t step = -1;  // the step of the rank nearest it: the one waiting in it, or the earliest past it
};

// nullopt when the others place it no further than its own record (`own`) does. A record inside
// the collective the others finished is placed as done with it: its end was among the events lost.
// `sent_in`: the latest collective in which another rank received a chunk from it (-1: none).
std::optional<KilledRankPosition> place_killed_rank(const PeerPosition& own, const std::vector<PeerPosition>& others,
                                                    int64_t sent_in = -1);

}  // namespace ringlab

#pragma once
// A ring step in words, as every report of ringlab counts it: "reduce-scatter step 2 of 3" is the
// step in progress, counted from 1 within its phase. A ring of N ranks takes N-1 steps in each
// phase, reduce-scatter first (ring_allreduce.h); the error a ring step throws, the flight
// recorder's table, a failure report's "where each rank was" and the Failure lab all say it so.
#include <string>

namespace ringlab {

// phase: 0 reduce-scatter, 1 all-gather; step_in_phase from 0.
std::string ring_step_words(int phase, int step_in_phase, int world_size);
// The same from a count across both phases, 0 .. 2(N-1)-1, as the flight recorder keeps it;
// "-" outside that range.
std::string ring_step_words(int ring_step, int world_size);

}  // namespace ringlab

#pragma once
// How the ring works, for N ranks holding a tensor cut into N chunks.
//
// Reduce-scatter. At step s, rank r sends chunk (r - s) mod N to its right neighbour and receives
// chunk (r - s - 1) mod N from its left neighbour, adding what arrives into its own copy. Why
// those chunks: at step 0 every rank starts the chunk named after itself, and each step passes
// every partial sum one place to the right. The partial sum of chunk c therefore starts at rank c
// and after s steps sits at rank c + s holding s + 1 ranks' contributions; what rank r receives
// at step s is the partial sum that started s + 1 ranks to its left, which is chunk r - s - 1, and
// what it forwards is the one it received (and added to) at step s - 1, chunk r - s.
// After N - 1 steps the partial sum of chunk c has visited every rank once: it sits, complete,
// at rank c + N - 1 = c - 1. So rank r owns the fully reduced chunk (r + 1) mod N.
//
// All-gather. Now each complete chunk travels once more around the ring, overwriting instead of
// adding: at step s rank r sends chunk (r + 1 - s) mod N (at s = 0 the one it owns, later the one
// it just received) and receives chunk (r - s) mod N. After N - 1 more steps every rank holds
// every complete chunk.
//
// Cost. Each phase sends N - 1 chunks of 1/N of the buffer per rank, so each rank sends (and
// receives) 2(N - 1)/N of the buffer in total, whatever N is: the ring is bandwidth-optimal, which
// is why nccl-tests report "bus bandwidth" as algbw * 2(N - 1)/N.
//
// The schedule is the workers' (engine/dist's ring, the ringlab_torch package's teaching ring) and
// the views' (which chunk arrives where in the step the class is about to take).
#include "engine/events/event.h"

namespace ringlab {

// The chunk rank `rank` sends / receives at step `ring_step` (from 0 within `phase`) of a ring of
// `world` ranks: it sends to rank + 1 and receives from rank - 1.
inline int ring_send_chunk(RingPhase phase, int rank, int ring_step, int world) {
  const int c = phase == RingPhase::ReduceScatter ? rank - ring_step : rank + 1 - ring_step;
  return ((c % world) + world) % world;
}
inline int ring_recv_chunk(RingPhase phase, int rank, int ring_step, int world) {
  return ring_send_chunk(phase, rank - 1, ring_step, world);
}

}  // namespace ringlab

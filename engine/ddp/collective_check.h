#pragma once
// Mismatched collectives are detected, not hung on. Before each collective a rank sends its
// fingerprint (sequence number, training step, operation, bucket, element count, dtype) to its
// right-hand ring neighbour and compares it with the one from its left. Around a ring, "equal
// to my left neighbour" on every rank means "equal everywhere", so one small message per rank
// replaces an all-gather. A mismatch stops the run before any gradient moves, with both
// fingerprints in the message.
#include <cstdint>
#include <string>

#include "engine/dist/process_group.h"

namespace ringlab::ddp {

struct CollectiveFingerprint {
  int64_t seq = 0;
  int64_t step = -1;
  int32_t op = 0;       // 1: all-reduce, 2: broadcast
  int32_t bucket = -1;  // -1: the demo tensor, -2: an injected extra collective, -3: the stop vote
  int64_t numel = 0;
  int32_t dtype = 0;    // 0: float32
  int32_t pad = 0;

  bool operator==(const CollectiveFingerprint&) const = default;
  std::string describe() const;
};

// The workers' vote at a step boundary (stop here or not, see runtime/step_votes.h): a broadcast
// of two floats that is checked like every collective, so a rank that skipped or added an
// all-reduce meets a mismatch at the vote instead of pairing with it and hanging.
inline constexpr int32_t kStopVoteBucket = -3;
inline CollectiveFingerprint stop_vote_fingerprint(int64_t step) { return {-1, step, 2, kStopVoteBucket, 2, 0, 0}; }

// Throws Error naming this rank's and its left neighbour's fingerprints on a mismatch.
void check_collective(ProcessGroup& group, const CollectiveFingerprint& mine);

}  // namespace ringlab::ddp

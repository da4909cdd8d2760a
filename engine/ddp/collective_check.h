#pragma once
// Mismatched collectives are detected, not hung on. Before each collective a rank sends its
// fingerprint (sequence number, training step, operation, bucket, element count, dtype) to its
// right-hand ring neighbour and compares it with the one from its left. Before a ring all-reduce
// the fingerprint rides on the ring's first message instead (dist/ring_allreduce.h), and costs
// no message of its own; the exchange below pairs with that message, so a rank at a stop vote
// and a rank at an all-reduce still meet and compare. Around a ring, "equal
// to my left neighbour" on every rank means "equal everywhere", so one small message per rank
// replaces an all-gather. A mismatch stops the run before any gradient moves, with both
// fingerprints in the message.
#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "engine/core/error.h"
#include "engine/dist/process_group.h"
#include "engine/events/collective_fingerprint.h"

namespace ringlab::ddp {

using ringlab::CollectiveFingerprint;  // events/collective_fingerprint.h: also an event's payload

// The check's error: this rank's fingerprint, its left neighbour's, and which rank that is.
class CollectiveMismatchError : public Error {
 public:
  CollectiveMismatchError(const ErrorContext& ctx, const CollectiveFingerprint& mine, int neighbour,
                          const CollectiveFingerprint& theirs);
  CollectiveFingerprint mine, theirs;
  int neighbour = -1;
};

// The workers' vote at a step boundary (stop here or not, see rank/step_votes.h): a broadcast
// of two floats that is checked like every collective, so a rank that skipped or added an
// all-reduce meets a mismatch at the vote instead of pairing with it and hanging.
inline CollectiveFingerprint stop_vote_fingerprint(int64_t step) { return {-1, step, 2, kStopVoteBucket, 2, 0, 0}; }

// How the fingerprints travel. Point-to-point: one small message to the right-hand neighbour.
// In an all-reduce: a table with one row per rank, summed by the backend's own all-reduce, for
// NCCL, whose point-to-point moves device memory only but whose all-reduce takes host memory too.
enum class FingerprintRoute { PointToPoint, NativeAllreduce };

// The fingerprint as floats (its bytes as they are: nothing reads them as numbers), to ride on
// a ring's first message as its header.
inline constexpr size_t kFingerprintFloats = sizeof(CollectiveFingerprint) / sizeof(float);
std::array<float, kFingerprintFloats> fingerprint_as_floats(const CollectiveFingerprint& fp);
// The check's second half, for a fingerprint that arrived as floats from the left neighbour.
// Throws CollectiveMismatchError as check_collective does.
void compare_with_left(const ProcessGroup& group, const CollectiveFingerprint& mine, std::span<const float> theirs);

// Throws CollectiveMismatchError (its message names both fingerprints) on a mismatch.
void check_collective(ProcessGroup& group, const CollectiveFingerprint& mine, FingerprintRoute route);
// The same, by the route the group's backend can take.
void check_collective(ProcessGroup& group, const CollectiveFingerprint& mine);

}  // namespace ringlab::ddp

#include "engine/ddp/collective_check.h"

#include <cstdint>
#include <cstring>
#include <vector>

#include <fmt/core.h>

#include "engine/core/error.h"

namespace ringlab::ddp {
namespace {

// Reserved for fingerprints; the ring's own tags stay below it and never overlap in time.
constexpr int kFingerprintTag = 32767;
constexpr size_t kFloats = sizeof(CollectiveFingerprint) / sizeof(float);
static_assert(sizeof(CollectiveFingerprint) % sizeof(float) == 0);

}  // namespace

CollectiveMismatchError::CollectiveMismatchError(const ErrorContext& ctx, const CollectiveFingerprint& mine_,
                                                 int neighbour_, const CollectiveFingerprint& theirs_)
    : Error(ctx, fmt::format("mismatched collectives: this rank is at {}, but rank {} is at {}", mine_.describe(),
                             neighbour_, theirs_.describe())),
      mine(mine_),
      theirs(theirs_),
      neighbour(neighbour_) {}

namespace {

int left_of(const ProcessGroup& group) { return (group.rank() + group.size() - 1) % group.size(); }

// One small message to the right, one from the left.
CollectiveFingerprint exchange_point_to_point(ProcessGroup& group, const CollectiveFingerprint& mine) {
  const int right = (group.rank() + 1) % group.size();
  float out[kFloats], in[kFloats];
  std::memcpy(out, &mine, sizeof mine);  // the bytes travel as they are; nothing reads them as floats
  auto recv = group.irecv({in, kFloats}, left_of(group), kFingerprintTag);
  auto send = group.isend({out, kFloats}, right, kFingerprintTag);
  send->wait(group.timeout());
  recv->wait(group.timeout());
  CollectiveFingerprint theirs;
  std::memcpy(&theirs, in, sizeof theirs);
  return theirs;
}

// An all-gather made of a sum: every rank writes its fingerprint into its own row of a table of
// zeros and the table is all-reduced. The fingerprint's bytes go in as 16-bit pieces, whole
// numbers a float holds exactly, and a sum of one such number with zeros is that number, in
// any order of addition: the rows come back as they were written.
constexpr size_t kPieces = sizeof(CollectiveFingerprint) / sizeof(uint16_t);

CollectiveFingerprint exchange_in_allreduce(ProcessGroup& group, const CollectiveFingerprint& mine) {
  std::vector<float> table(kPieces * static_cast<size_t>(group.size()), 0.0f);
  uint16_t pieces[kPieces];
  std::memcpy(pieces, &mine, sizeof mine);
  for (size_t i = 0; i < kPieces; ++i) table[static_cast<size_t>(group.rank()) * kPieces + i] = pieces[i];
  group.allreduce_native(table);
  for (size_t i = 0; i < kPieces; ++i)
    pieces[i] = static_cast<uint16_t>(table[static_cast<size_t>(left_of(group)) * kPieces + i]);
  CollectiveFingerprint theirs;
  std::memcpy(&theirs, pieces, sizeof theirs);
  return theirs;
}

}  // namespace

void check_collective(ProcessGroup& group, const CollectiveFingerprint& mine, FingerprintRoute route) {
  if (group.size() == 1) return;
  const CollectiveFingerprint theirs = route == FingerprintRoute::PointToPoint ? exchange_point_to_point(group, mine)
                                                                               : exchange_in_allreduce(group, mine);
  if (!(theirs == mine))
    throw CollectiveMismatchError(ErrorContext{group.rank(), "collective check", mine.step}, mine, left_of(group),
                                  theirs);
}

void check_collective(ProcessGroup& group, const CollectiveFingerprint& mine) {
  check_collective(group, mine,
                   group.backend() == "nccl" ? FingerprintRoute::NativeAllreduce : FingerprintRoute::PointToPoint);
}

}  // namespace ringlab::ddp

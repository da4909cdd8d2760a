#include "engine/ddp/collective_check.h"

#include <cstring>

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

void check_collective(ProcessGroup& group, const CollectiveFingerprint& mine) {
  const int n = group.size();
  if (n == 1) return;
  const int right = (group.rank() + 1) % n, left = (group.rank() + n - 1) % n;
  float out[kFloats], in[kFloats];
  std::memcpy(out, &mine, sizeof mine);  // the bytes travel as they are; nothing reads them as floats
  auto recv = group.irecv({in, kFloats}, left, kFingerprintTag);
  auto send = group.isend({out, kFloats}, right, kFingerprintTag);
  send->wait(group.timeout());
  recv->wait(group.timeout());
  CollectiveFingerprint theirs;
  std::memcpy(&theirs, in, sizeof theirs);
  if (!(theirs == mine))
    throw CollectiveMismatchError(ErrorContext{group.rank(), "collective check", mine.step}, mine, left, theirs);
}

}  // namespace ringlab::ddp

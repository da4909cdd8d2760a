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

std::string CollectiveFingerprint::describe() const {
  if (bucket == kStopVoteBucket) return fmt::format("the stop vote before step {}", step);
  const char* name = op == 1 ? "all-reduce" : op == 2 ? "broadcast" : "?";
  const std::string what = bucket >= 0   ? fmt::format("bucket {}", bucket)
                           : bucket == -1 ? std::string("demo tensor")
                                          : std::string("extra collective");
  return fmt::format("#{} {} of {} ({} floats) at step {}", seq, name, what, numel, step);
}

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
    throw Error(ErrorContext{group.rank(), "collective check", mine.step},
                fmt::format("mismatched collectives: this rank is at {}, but rank {} is at {}", mine.describe(), left,
                            theirs.describe()));
}

}  // namespace ringlab::ddp

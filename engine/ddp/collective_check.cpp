#include "engine/ddp/collective_check.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include <fmt/core.h>

#include "engine/core/error.h"
#include "engine/dist/ring_allreduce.h"

namespace ringlab::ddp {
namespace {

// Its bytes travel as floats and come back by memcpy: sound only for a trivially copyable type.
static_assert(std::is_trivially_copyable_v<CollectiveFingerprint>);
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

// One message to the right, one from the left, laid out as a ring's first message (the
// fingerprint, then room for the data a ring carries there), on that message's tag: whichever
// a neighbour sends, this receives it whole.
CollectiveFingerprint exchange_point_to_point(ProcessGroup& group, const CollectiveFingerprint& mine) {
  const int right = (group.rank() + 1) % group.size();
  std::array<float, ring_first_message_elems(kFingerprintFloats)> out{}, in{};
  const auto header = fingerprint_as_floats(mine);
  std::copy(header.begin(), header.end(), out.begin());
  auto recv = group.irecv(in, left_of(group), kRingFirstMessageTag);
  auto send = group.isend(out, right, kRingFirstMessageTag);
  send->wait(group.timeout());
  recv->wait(group.timeout());
  CollectiveFingerprint theirs;
  std::memcpy(static_cast<void*>(&theirs), in.data(), sizeof theirs);
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
  std::memcpy(static_cast<void*>(&theirs), pieces, sizeof theirs);
  return theirs;
}

}  // namespace

std::array<float, kFingerprintFloats> fingerprint_as_floats(const CollectiveFingerprint& fp) {
  std::array<float, kFingerprintFloats> floats;
  std::memcpy(floats.data(), &fp, sizeof fp);
  return floats;
}

void compare_with_left(const ProcessGroup& group, const CollectiveFingerprint& mine, std::span<const float> theirs_floats) {
  CollectiveFingerprint theirs;
  std::memcpy(static_cast<void*>(&theirs), theirs_floats.data(), std::min(sizeof theirs, theirs_floats.size_bytes()));
  if (!(theirs == mine))
    throw CollectiveMismatchError(ErrorContext{group.rank(), "collective check", mine.step}, mine, left_of(group),
                                  theirs);
}

void check_collective(ProcessGroup& group, const CollectiveFingerprint& mine, FingerprintRoute route) {
  if (group.size() == 1) return;
  const CollectiveFingerprint theirs = route == FingerprintRoute::PointToPoint ? exchange_point_to_point(group, mine)
                                                                               : exchange_in_allreduce(group, mine);
  compare_with_left(group, mine, fingerprint_as_floats(theirs));
}

void check_collective(ProcessGroup& group, const CollectiveFingerprint& mine) {
  check_collective(group, mine,
                   group.backend() == "nccl" ? FingerprintRoute::NativeAllreduce : FingerprintRoute::PointToPoint);
}

}  // namespace ringlab::ddp

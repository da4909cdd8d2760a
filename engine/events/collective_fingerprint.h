#pragma once
// What a collective is, in seven numbers: the fingerprint ranks compare before every collective
// (ddp/collective_check.h), and the payload of the CollectiveMismatch event that reports a
// mismatch, so nothing downstream parses the error's words.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace ringlab {

// Buckets that are not gradient buckets.
inline constexpr int32_t kDemoBucket = -1;      // the seed's direct all_reduce of a small tensor
inline constexpr int32_t kExtraBucket = -2;     // an injected extra collective (failure lab)
inline constexpr int32_t kStopVoteBucket = -3;  // the ranks' vote at a step boundary (rank/step_votes.h)

struct CollectiveFingerprint {
  int64_t seq = 0;
  int64_t step = -1;
  int32_t op = 0;       // 1: all-reduce, 2: broadcast
  int32_t bucket = -1;  // a gradient bucket (>= 0), or one of the k...Bucket values above
  int64_t numel = 0;
  int32_t dtype = 0;    // 0: float32
  int32_t pad = 0;

  bool operator==(const CollectiveFingerprint&) const = default;
  std::string describe() const;  // "#7 all-reduce of bucket 0 (2737 floats) at step 5"
};

inline constexpr size_t kFingerprintFields = 6;  // as event indices: seq, step, op, bucket, numel, dtype
void append_fields(const CollectiveFingerprint& f, std::vector<int64_t>& out);
// The fingerprint at `fields` (kFingerprintFields numbers); nullopt when too few are there.
std::optional<CollectiveFingerprint> fingerprint_from_fields(std::span<const int64_t> fields);

}  // namespace ringlab

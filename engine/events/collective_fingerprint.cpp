#include "engine/events/collective_fingerprint.h"

#include <fmt/core.h>

namespace ringlab {

std::string CollectiveFingerprint::describe() const {
  if (bucket == kStopVoteBucket) return fmt::format("the stop vote before step {}", step);
  const char* name = op == 1 ? "all-reduce" : op == 2 ? "broadcast" : "?";
  const std::string what = bucket >= 0            ? fmt::format("bucket {}", bucket)
                           : bucket == kDemoBucket ? std::string("demo tensor")
                                                   : std::string("extra collective");
  return fmt::format("#{} {} of {} ({} floats) at step {}", seq, name, what, numel, step);
}

void append_fields(const CollectiveFingerprint& f, std::vector<int64_t>& out) {
  out.insert(out.end(), {f.seq, f.step, f.op, f.bucket, f.numel, f.dtype});
}

std::optional<CollectiveFingerprint> fingerprint_from_fields(std::span<const int64_t> fields) {
  if (fields.size() < kFingerprintFields) return std::nullopt;
  CollectiveFingerprint f;
  f.seq = fields[0];
  f.step = fields[1];
  f.op = static_cast<int32_t>(fields[2]);
  f.bucket = static_cast<int32_t>(fields[3]);
  f.numel = fields[4];
  f.dtype = static_cast<int32_t>(fields[5]);
  return f;
}

}  // namespace ringlab

#include "engine/core/bucket_assignment.h"

#include <numeric>

#include <fmt/core.h>

#include "engine/core/error.h"

namespace ringlab {

std::vector<std::vector<int>> assign_buckets_by_size(std::span<const int64_t> tensor_bytes, std::span<const int> order,
                                                     const BucketLimits& limits) {
  if (limits.first_bytes <= 0 || limits.cap_bytes <= 0)
    throw InputError(fmt::format("bucket limits must be > 0 bytes; got a first bucket of {} and a cap of {}",
                                 limits.first_bytes, limits.cap_bytes));
  std::vector<std::vector<int>> buckets;
  std::vector<int> open;
  int64_t open_bytes = 0;
  for (int tensor : order) {
    open.push_back(tensor);
    open_bytes += tensor_bytes[static_cast<size_t>(tensor)];
    const int64_t limit = buckets.empty() ? limits.first_bytes : limits.cap_bytes;
    if (open_bytes >= limit) {
      buckets.push_back(std::move(open));
      open.clear();
      open_bytes = 0;
    }
  }
  if (!open.empty()) buckets.push_back(std::move(open));
  return buckets;
}

std::vector<std::vector<int>> ddp_buckets(std::span<const int64_t> tensor_bytes, const BucketLimits& limits,
                                          bool rebuilt) {
  std::vector<int> ready(tensor_bytes.size());
  std::iota(ready.rbegin(), ready.rend(), 0);  // the last parameter's gradient is ready first
  if (!rebuilt) return ready.empty() ? std::vector<std::vector<int>>{} : std::vector<std::vector<int>>{ready};
  return assign_buckets_by_size(tensor_bytes, ready, limits);
}

}  // namespace ringlab

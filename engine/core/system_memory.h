#pragma once
// How much memory this machine can still give, for commands that know what they will allocate
// and should refuse before the kernel's OOM killer decides for them.
#include <cstdint>
#include <optional>

namespace ringlab {

// MemAvailable from /proc/meminfo, in bytes: what can be allocated without swapping (free memory
// plus the page cache that can be dropped). None when /proc/meminfo cannot be read.
std::optional<uint64_t> available_memory_bytes();

}  // namespace ringlab

#include "engine/core/system_memory.h"

#include <cstdio>
#include <fstream>
#include <string>

namespace ringlab {

std::optional<uint64_t> available_memory_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  unsigned long long kib = 0;
  while (std::getline(meminfo, line))
    if (std::sscanf(line.c_str(), "MemAvailable: %llu kB", &kib) == 1) return uint64_t{kib} * 1024;  // kB: KiB
  return std::nullopt;
}

}  // namespace ringlab

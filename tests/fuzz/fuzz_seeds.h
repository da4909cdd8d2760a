#pragma once
// What every fuzz target shares: its seed corpus is written by the target itself, from the real
// encoders, when RINGLAB_FUZZ_WRITE_SEEDS names a folder (scripts/fuzz.sh and the ctest seed runs).
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace ringlab::fuzz {

// One seed file. `mode`, when given, is the first input byte the network targets read as
// "say the right hello first" (even) or "send the bytes as they are" (odd).
inline void write_seed(const std::string& dir, const std::string& name, const std::vector<uint8_t>& bytes,
                       std::optional<uint8_t> mode = std::nullopt) {
  std::ofstream f(dir + "/" + name, std::ios::binary);
  if (mode) f.put(static_cast<char>(*mode));
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// For LLVMFuzzerInitialize: writes the seeds and exits when asked to, else returns 0.
inline int write_seeds_if_asked(void (*write_seeds)(const std::string& dir)) {
  if (const char* dir = std::getenv("RINGLAB_FUZZ_WRITE_SEEDS")) {
    write_seeds(dir);
    std::exit(0);
  }
  return 0;
}

}  // namespace ringlab::fuzz
